import { useId } from "react";
import type { TestPlan } from "../../api/types.ts";
import { formControl } from "../../components/control-classes.ts";
import { FieldMessages } from "./field-messages.tsx";

export type DeviceRow = TestPlan["devices"][number];

const control = formControl;

/** The plan's devices as rows of platform, model and OS version; none runs once on the agent host. */
export function DevicesEditor({
  devices,
  onChange,
  errors,
}: {
  devices: DeviceRow[];
  onChange: (devices: DeviceRow[]) => void;
  errors: Record<string, string[]>;
}) {
  const id = useId();
  const set = (index: number, change: Partial<DeviceRow>) =>
    onChange(devices.map((device, at) => (at === index ? { ...device, ...change } : device)));

  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium">Devices</legend>
      <p className="text-xs text-muted">
        One device run per row. No rows: the plan runs once on the agent host itself.
      </p>
      <FieldMessages id={`${id}-devices`} messages={errors.devices} />
      {devices.map((device, index) => {
        const field = (name: string) => `devices.${index}.${name}`;
        const rowId = `${id}-${index}`;
        return (
          <div
            // biome-ignore lint/suspicious/noArrayIndexKey: a device row is its position in the plan
            key={index}
            className="grid grid-cols-1 gap-2 rounded-md border border-line p-2 sm:grid-cols-[10rem_1fr_8rem_auto]"
          >
            <div className="flex flex-col gap-1">
              <label htmlFor={`${rowId}-platform`} className="text-xs text-muted">
                Device {index + 1} platform
              </label>
              <select
                id={`${rowId}-platform`}
                className={control}
                value={device.platform}
                aria-invalid={Boolean(errors[field("platform")])}
                aria-describedby={`${rowId}-platform-error`}
                onChange={(event) => set(index, { platform: event.target.value as DeviceRow["platform"] })}
              >
                <option value="android">android</option>
                <option value="ios">ios</option>
              </select>
              <FieldMessages id={`${rowId}-platform-error`} messages={errors[field("platform")]} />
            </div>
            <div className="flex flex-col gap-1">
              <label htmlFor={`${rowId}-model`} className="text-xs text-muted">
                Device {index + 1} model
              </label>
              <input
                id={`${rowId}-model`}
                className={control}
                value={device.model ?? ""}
                placeholder="any (e.g. Pixel 8)"
                aria-invalid={Boolean(errors[field("model")])}
                aria-describedby={`${rowId}-model-error`}
                onChange={(event) => set(index, { model: event.target.value || undefined })}
              />
              <FieldMessages id={`${rowId}-model-error`} messages={errors[field("model")]} />
            </div>
            <div className="flex flex-col gap-1">
              <label htmlFor={`${rowId}-os`} className="text-xs text-muted">
                Device {index + 1} OS version
              </label>
              <input
                id={`${rowId}-os`}
                className={control}
                value={device.os_version ?? ""}
                placeholder="any"
                aria-invalid={Boolean(errors[field("os_version")])}
                aria-describedby={`${rowId}-os-error`}
                onChange={(event) => set(index, { os_version: event.target.value || undefined })}
              />
              <FieldMessages id={`${rowId}-os-error`} messages={errors[field("os_version")]} />
            </div>
            <button
              type="button"
              className="h-9 self-end rounded-md border border-line px-3 text-sm hover:bg-sunken"
              onClick={() => onChange(devices.filter((_, at) => at !== index))}
            >
              Remove device {index + 1}
            </button>
          </div>
        );
      })}
      <button
        type="button"
        className="rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken"
        onClick={() => onChange([...devices, { platform: devices[0]?.platform ?? "android" }])}
      >
        Add a device
      </button>
    </fieldset>
  );
}
