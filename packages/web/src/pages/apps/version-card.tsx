import { useId } from "react";
import { type AppVersion, binaryUrl, testPackageUrl } from "../../api/apps.ts";
import { Fact } from "../../components/fact.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { BinaryFacts } from "./binary-facts.tsx";
import { FileSize } from "./file-size.tsx";
import { Sha256 } from "./sha256.tsx";
import { TestPackageFacts } from "./test-package-facts.tsx";
import { VersionRuns } from "./version-runs.tsx";
import type { AppRuns } from "./version-runs-source.ts";

const binaryNames: Record<AppVersion["binary"]["format"], string> = {
  apk: "APK",
  aab: "AAB",
  ipa: "IPA",
  app: ".app (zip)",
};

/** One uploaded version: its file, what the server read from it, its test package and its newest runs. */
export function VersionCard({
  version,
  latest,
  appRuns,
  planNames,
}: {
  version: AppVersion;
  latest: boolean;
  appRuns: AppRuns;
  planNames: ReadonlyMap<string, string>;
}) {
  const heading = useId();
  const sections = { binary: useId(), testPackage: useId(), runs: useId() };
  const what = `${version.package_name} ${version.version}`;
  return (
    <article aria-labelledby={heading} className="space-y-4 rounded-lg border border-line bg-surface p-4">
      <header className="flex flex-wrap items-center gap-x-3 gap-y-2">
        <h3 id={heading} className="text-lg font-semibold break-all">
          {version.version}
        </h3>
        {latest && (
          <span className="rounded-full bg-sunken px-2 py-0.5 text-xs font-medium text-muted">latest</span>
        )}
        <a
          href={binaryUrl(version.package_name, version.version)}
          download
          aria-label={`Download ${what} (${binaryNames[version.binary.format]})`}
          className="ml-auto rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken"
        >
          Download {binaryNames[version.binary.format]}
        </a>
      </header>
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 text-sm sm:grid-cols-3 lg:grid-cols-4">
        <Fact label="Size">
          <FileSize bytes={version.size_bytes} />
        </Fact>
        <Fact label="SHA-256">
          <Sha256 value={version.sha256} of={what} />
        </Fact>
        <Fact label="Uploaded">
          <Timestamp value={version.created_at} />
        </Fact>
      </dl>
      <section aria-labelledby={sections.binary} className="space-y-2 border-t border-line pt-3">
        <h4 id={sections.binary} className="text-sm font-semibold">
          Read from the binary
        </h4>
        <BinaryFacts binary={version.binary} />
      </section>
      <section aria-labelledby={sections.testPackage} className="space-y-2 border-t border-line pt-3">
        <div className="flex flex-wrap items-center gap-3">
          <h4 id={sections.testPackage} className="text-sm font-semibold">
            Test package
          </h4>
          {version.test_package && (
            <a
              href={testPackageUrl(version.package_name, version.version)}
              download
              aria-label={`Download the test package of ${what}`}
              className="ml-auto rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken"
            >
              Download test APK
            </a>
          )}
        </div>
        {version.test_package ? (
          <TestPackageFacts testPackage={version.test_package} />
        ) : version.binary.platform === "android" ? (
          <p className="text-sm text-muted">
            None. Upload the test APK with{" "}
            <code className="text-xs break-all">
              testbay upload --app {version.package_name} --version {version.version} --file APP.apk
              --test-file app-debug-androidTest.apk
            </code>{" "}
            (the build itself is not sent again).
          </p>
        ) : (
          <p className="text-sm text-muted">None.</p>
        )}
      </section>
      <section aria-labelledby={sections.runs} className="space-y-2 border-t border-line pt-3">
        <h4 id={sections.runs} className="text-sm font-semibold">
          Runs
        </h4>
        <VersionRuns
          packageName={version.package_name}
          version={version.version}
          appRuns={appRuns}
          planNames={planNames}
        />
      </section>
    </article>
  );
}
