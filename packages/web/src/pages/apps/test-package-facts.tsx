import type { TestPackage } from "../../api/apps.ts";
import { Fact } from "../../components/fact.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { androidApiLevel } from "./android-sdk.ts";
import { DottedName } from "./dotted-name.tsx";
import { FileSize } from "./file-size.tsx";
import { Sha256 } from "./sha256.tsx";

/**
 * A version's test package (API.md §4b): the instrumentation APK's own package, its runner and the app it
 * instruments, as the server read them from its manifest (or an XCUITest bundle's targets), and its size and
 * checksum.
 */
export function TestPackageFacts({ testPackage }: { testPackage: TestPackage }) {
  const what = `the test package of ${testPackage.package_name} ${testPackage.version}`;
  return (
    <dl className="grid grid-cols-2 gap-x-6 gap-y-3 text-sm sm:grid-cols-3 lg:grid-cols-4">
      {testPackage.format === "apk" ? (
        <InstrumentationFacts test={testPackage.test} />
      ) : (
        <XctestFacts test={testPackage.test} />
      )}
      <Fact label="Size">
        <FileSize bytes={testPackage.size_bytes} />
      </Fact>
      <Fact label="SHA-256">
        <Sha256 value={testPackage.sha256} of={what} />
      </Fact>
      <Fact label="Uploaded">
        <Timestamp value={testPackage.created_at} />
      </Fact>
    </dl>
  );
}

function InstrumentationFacts({ test }: { test: Extract<TestPackage, { format: "apk" }>["test"] }) {
  return (
    <>
      <Fact label="Test package">
        <DottedName name={test.package_name} />
      </Fact>
      <Fact label="Runner">
        <DottedName name={test.runner} />
      </Fact>
      <Fact label="Instruments">
        <DottedName name={test.target_package} />
      </Fact>
      <Fact label="Format">Instrumentation APK</Fact>
      {test.min_sdk !== null && <Fact label="Min SDK">{androidApiLevel(test.min_sdk)}</Fact>}
      {test.target_sdk !== null && <Fact label="Target SDK">{androidApiLevel(test.target_sdk)}</Fact>}
    </>
  );
}

/** An XCUITest bundle: its test targets and the app each drives, as its .xctestrun names them. */
function XctestFacts({ test }: { test: Extract<TestPackage, { format: "xctest" }>["test"] }) {
  return (
    <>
      <Fact label="Test targets">{test.test_targets.map((target) => target.name).join(", ")}</Fact>
      <Fact label="Drives">
        {[...new Set(test.test_targets.flatMap((target) => target.ui_target_app ?? []))].join(", ") || "—"}
      </Fact>
      <Fact label="Format">XCUITest bundle</Fact>
      <Fact label="xctestrun">{test.xctestrun}</Fact>
    </>
  );
}
