import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, Outlet, useRouter } from "@tanstack/react-router";
import { useEffect } from "react";
import { connectLiveUpdates } from "../../api/live-updates.ts";
import { sessionQuery } from "../../api/session.ts";
import { LiveIndicator } from "./live-indicator.tsx";
import { PersonMenu } from "./person-menu.tsx";
import { ThemeToggle } from "./theme-toggle.tsx";

const sections = [
  { to: "/runs", label: "Runs" },
  { to: "/apps", label: "Apps" },
  { to: "/plans", label: "Test plans" },
  { to: "/failures", label: "Failures" },
  { to: "/flaky", label: "Flaky tests" },
  { to: "/agents", label: "Agents" },
  { to: "/settings", label: "Settings" },
] as const;

/** The frame of every signed-in page: the sections, the person and the theme, then the page. */
export function AppLayout() {
  const session = useQuery(sessionQuery);
  const router = useRouter();
  const signedOut = session.data?.signed_in === false;
  const signedIn = session.data?.signed_in === true;
  const queries = useQueryClient();

  // A session that ends while the page is open (expired, signed out elsewhere): the route's check runs again and
  // sends the person to the sign-in page, which brings them back here afterwards.
  useEffect(() => {
    if (signedOut) void router.invalidate();
  }, [signedOut, router]);

  // One stream of live updates for every page of the tab, while someone is signed in.
  useEffect(() => (signedIn ? connectLiveUpdates(queries) : undefined), [signedIn, queries]);

  return (
    <div className="min-h-dvh">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:p-2">
        Skip to the page
      </a>
      <header className="border-b border-line bg-surface">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-1 px-4 py-2">
          <Link to="/runs" className="font-semibold tracking-tight">
            Testbay
          </Link>
          <nav
            aria-label="Sections"
            className="order-last -mx-4 w-full overflow-x-auto px-4 sm:order-none sm:mx-0 sm:w-auto sm:px-0"
          >
            <ul className="flex gap-1">
              {sections.map((section) => (
                <li key={section.to}>
                  <Link
                    to={section.to}
                    className="block rounded-md px-2 py-1.5 text-sm whitespace-nowrap text-muted hover:bg-sunken hover:text-ink sm:px-3"
                    activeProps={{ className: "bg-sunken text-ink font-medium", "aria-current": "page" }}
                  >
                    {section.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div className="ml-auto flex items-center gap-3">
            <LiveIndicator />
            <ThemeToggle />
            {session.data?.signed_in && <PersonMenu person={session.data.user} />}
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-7xl px-4 py-6">
        <Outlet />
      </main>
    </div>
  );
}
