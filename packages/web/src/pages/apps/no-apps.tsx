/** The apps list before the first app: how a pipeline registers one and uploads its builds (CLIENT.md). */
export function NoApps() {
  return (
    <div className="space-y-3 rounded-lg border border-dashed border-line bg-surface p-4 text-sm">
      <p className="font-medium">No apps yet.</p>
      <p className="text-muted">
        Register your app once, then upload each build (and its test APK) from your pipeline with the Testbay
        CLI:
      </p>
      <pre className="overflow-x-auto rounded-md bg-sunken p-3 font-mono text-xs">
        {[
          "testbay apps create --app com.example.shop --platform android --name Shop",
          "testbay upload --app com.example.shop --version 1.0.0 \\",
          "  --file app-release.apk --test-file app-debug-androidTest.apk",
        ].join("\n")}
      </pre>
      <p className="text-muted">
        The CLI comes from this server:{" "}
        <code className="text-xs">npm install -g {origin()}/downloads/testbay-cli.tgz</code>
      </p>
    </div>
  );
}

const origin = () => window.location.origin;
