import { useLocation } from "@tanstack/react-router";

const titles: Record<string, string> = { "/apps": "Apps", "/plans": "Test plans", "/settings": "Settings" };

/** The navigation's pages not built yet (issue 14's next slices): says so instead of a blank page. */
export function ComingPage() {
  const { pathname } = useLocation();
  return (
    <section className="space-y-2">
      <h1 className="text-xl font-semibold">{titles[pathname] ?? "Coming"}</h1>
      <p className="text-muted">
        This page comes in a later version of the dashboard. The API has it already: see{" "}
        <a className="text-accent underline" href="/docs">
          the API reference
        </a>
        .
      </p>
    </section>
  );
}
