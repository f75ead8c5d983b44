import { formatBytes } from "../../format/bytes.ts";

const exact = new Intl.NumberFormat();

/** A size in human units ("3.1 MB"), the exact number of bytes on hover and for screen readers. */
export function FileSize({ bytes }: { bytes: number }) {
  const whole = `${exact.format(bytes)} bytes`;
  return (
    <span title={whole} className="tabular-nums">
      {formatBytes(bytes)}
      <span className="sr-only"> ({whole})</span>
    </span>
  );
}
