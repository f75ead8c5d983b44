import type { BinaryMetadata } from "../../api/apps.ts";
import { Fact } from "../../components/fact.tsx";
import { androidApiLevel, shortPermission } from "./android-sdk.ts";
import { DottedName } from "./dotted-name.tsx";

const formats: Record<BinaryMetadata["format"], string> = {
  apk: "APK",
  aab: "Android App Bundle (AAB)",
  ipa: "IPA",
  app: "Zipped .app bundle",
};

/**
 * What the server read from the binary itself (API.md §4): the manifest's or Info.plist's names and numbers, the
 * SDK levels, native ABIs and permissions. A field the format does not have (min SDK of an IPA) is left out.
 */
export function BinaryFacts({ binary }: { binary: BinaryMetadata }) {
  const android = binary.platform === "android";
  return (
    <div className="space-y-3">
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 text-sm sm:grid-cols-3 lg:grid-cols-4">
        <Fact label="Format">{formats[binary.format]}</Fact>
        {binary.display_name && <Fact label="Label">{binary.display_name}</Fact>}
        <Fact label="Version name">{binary.version_name ?? <None />}</Fact>
        <Fact label={android ? "Version code" : "Build (CFBundleVersion)"}>
          {binary.version_code ?? <None />}
        </Fact>
        {binary.min_sdk !== null && <Fact label="Min SDK">{androidApiLevel(binary.min_sdk)}</Fact>}
        {binary.target_sdk !== null && <Fact label="Target SDK">{androidApiLevel(binary.target_sdk)}</Fact>}
        {binary.min_os_version !== null && <Fact label="Minimum iOS">{binary.min_os_version}</Fact>}
        {android && (
          <Fact label="Native ABIs">
            {binary.abis.length > 0 ? binary.abis.join(", ") : "none (no native code)"}
          </Fact>
        )}
        <Fact label="Debuggable">{binary.debuggable ? "yes" : "no"}</Fact>
      </dl>
      {android && <Permissions permissions={binary.permissions} />}
    </div>
  );
}

function None() {
  return <span className="text-muted">not set</span>;
}

/** Requested permissions, folded: an app asks for a dozen or more. */
function Permissions({ permissions }: { permissions: string[] }) {
  if (permissions.length === 0) return <p className="text-sm text-muted">Requests no permissions.</p>;
  return (
    <details className="text-sm">
      <summary className="cursor-pointer">Permissions ({permissions.length})</summary>
      <ul className="mt-2 flex flex-wrap gap-1.5">
        {permissions.map((permission) => (
          <li
            key={permission}
            title={permission}
            className="rounded bg-sunken px-1.5 py-0.5 font-mono text-xs"
          >
            <DottedName name={shortPermission(permission)} />
          </li>
        ))}
      </ul>
    </details>
  );
}
