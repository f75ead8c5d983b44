import { useMutation, useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId, useState } from "react";
import { ApiProblem } from "../api/problem.ts";
import { sessionQuery, signIn } from "../api/session.ts";
import { afterSignIn } from "../app/after-sign-in.ts";
import { signInRoute } from "../app/router.tsx";
import { LabelledField } from "../components/labelled-field.tsx";
import { ThemeToggle } from "./layout/theme-toggle.tsx";

/** The sign-in form's inputs: larger than the dashboard's, on the page's own background. */
const signInControl = "w-full rounded-md border border-line bg-canvas px-3 py-2";

/** A sign-in field with its label above it. */
function SignInField({ id, label, children }: { id: string; label: string; children: React.ReactNode }) {
  return (
    <LabelledField id={id} label={label} className="space-y-1" labelClassName="block text-sm font-medium">
      {children}
    </LabelledField>
  );
}

/**
 * What the server's single sign-on callback means by `/sign-in?error=<code>`, and what to do about it. The
 * codes are the server's fixed set; an unknown one gets a general message rather than being shown.
 */
const singleSignOnErrors: Record<string, { message: string; fix?: string }> = {
  access_denied: { message: "Single sign-on was cancelled at your identity provider." },
  provider_error: {
    message: "Your identity provider refused the sign-in.",
    fix: "Try again; if it keeps failing, ask your administrator to check the server's log.",
  },
  provider_unreachable: {
    message: "Testbay could not reach your identity provider.",
    fix: "Try again in a moment; if it keeps failing, ask your administrator to check TESTBAY_OIDC_ISSUER.",
  },
  invalid_state: {
    message: "This sign-in was not started from this browser, or it was already used.",
    fix: "Start again with the single sign-on button.",
  },
  sign_in_expired: {
    message: "The sign-in took too long (more than 10 minutes).",
    fix: "Start again with the single sign-on button.",
  },
  email_missing: {
    message: "Your identity provider did not tell Testbay your email address.",
    fix: "Ask your administrator to allow the email scope for Testbay at the identity provider.",
  },
  email_not_verified: {
    message: "Your identity provider has not verified your email address.",
    fix: "Verify your email address with your identity provider, then sign in again.",
  },
  account_disabled: {
    message: "Your Testbay account is disabled.",
    fix: "Ask an administrator of your organization to enable it.",
  },
  organization_missing: {
    message: "Testbay is not set up for single sign-on yet: its organization does not exist.",
    fix: "Ask your administrator to create the organization named in TESTBAY_OIDC_ORG.",
  },
};

const unknownSingleSignOnError = { message: "Single sign-on failed.", fix: "Try again." };

/** The callback's error code from the address bar (the sign-in route does not declare it as a search field). */
function singleSignOnError(): { message: string; fix?: string } | undefined {
  const code = new URLSearchParams(window.location.search).get("error");
  if (code === null) return undefined;
  return Object.hasOwn(singleSignOnErrors, code) ? singleSignOnErrors[code] : unknownSingleSignOnError;
}

/**
 * The organizations to choose from when the email and password open accounts in several (the server's 409
 * organization_required lists them: features/people/people.routes.ts), or undefined for any other answer.
 */
function organizationsToChoose(error: unknown): string[] | undefined {
  if (!(error instanceof ApiProblem) || error.problem.code !== "organization_required") return undefined;
  const listed = (error.problem as { organizations?: unknown }).organizations;
  return Array.isArray(listed)
    ? listed.filter((name): name is string => typeof name === "string")
    : undefined;
}

export function SignInPage() {
  const { redirect } = signInRoute.useSearch();
  const navigate = useNavigate();
  const ids = { email: useId(), password: useId(), org: useId(), error: useId() };
  // Shown once the server asked which organization, and kept: the person may sign in again after an error.
  const [organizations, setOrganizations] = useState<string[]>();
  const session = useQuery(sessionQuery);
  const singleSignOn = session.data?.signed_in === false && session.data.oidc === true;
  const next = afterSignIn(redirect, window.location.origin);
  const attempt = useMutation({
    mutationFn: ({ email, password, org }: { email: string; password: string; org?: string }) =>
      signIn(email, password, org),
    onSuccess: () => navigate({ href: next, replace: true }),
    onError: (error) => {
      const listed = organizationsToChoose(error);
      if (listed) setOrganizations(listed);
    },
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const org = form.get("org");
    attempt.mutate({
      email: String(form.get("email")),
      password: String(form.get("password")),
      ...(typeof org === "string" && org !== "" ? { org } : {}),
    });
  };

  // A failed password sign-in says what went wrong with it; otherwise the single sign-on that sent the person here.
  const error = attempt.error;
  const ssoError = error ? undefined : singleSignOnError();
  const chooseOrganization = organizationsToChoose(error) !== undefined;
  const message =
    error instanceof ApiProblem && error.status === 401
      ? "The email or the password is wrong."
      : chooseOrganization
        ? "You have an account with this email and password in several organizations."
        : (error?.message ?? ssoError?.message);
  const fix = chooseOrganization
    ? "Choose the organization to sign in to, then sign in."
    : error instanceof ApiProblem && error.status !== 401
      ? error.problem.fix
      : ssoError?.fix;
  const shownError = error ?? ssoError;

  return (
    <main className="flex min-h-dvh items-center justify-center p-4">
      <div className="absolute top-3 right-3">
        <ThemeToggle />
      </div>
      <form
        onSubmit={submit}
        aria-describedby={shownError ? ids.error : undefined}
        className="w-full max-w-sm space-y-4 rounded-lg border border-line bg-surface p-6 shadow-sm"
      >
        <div>
          <h1 className="text-xl font-semibold">Sign in to Testbay</h1>
          <p className="mt-1 text-sm text-muted">Test runs, failures and devices of your organization.</p>
        </div>
        <SignInField id={ids.email} label="Email">
          <input
            id={ids.email}
            name="email"
            type="email"
            autoComplete="username"
            required
            className={signInControl}
          />
        </SignInField>
        <SignInField id={ids.password} label="Password">
          <input
            id={ids.password}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            aria-invalid={error && !chooseOrganization ? true : undefined}
            className={signInControl}
          />
        </SignInField>
        {organizations && (
          <SignInField id={ids.org} label="Organization">
            <select id={ids.org} name="org" required defaultValue="" className={signInControl}>
              <option value="" disabled>
                Choose…
              </option>
              {organizations.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </SignInField>
        )}
        {shownError && (
          <div
            id={ids.error}
            role="alert"
            className="rounded-md bg-red-50 p-3 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
          >
            <p>{message}</p>
            {fix && <p className="mt-1">{fix}</p>}
          </div>
        )}
        <button
          type="submit"
          disabled={attempt.isPending}
          className="w-full rounded-md bg-accent px-3 py-2 font-medium text-accent-ink disabled:opacity-60"
        >
          {attempt.isPending ? "Signing in…" : "Sign in"}
        </button>
        {singleSignOn && (
          // A plain link: the server sends the browser on to the identity provider, and back signed in.
          <a
            href={`/auth/oidc/start?next=${encodeURIComponent(next)}`}
            className="block w-full rounded-md border border-line px-3 py-2 text-center font-medium hover:bg-canvas"
          >
            Sign in with single sign-on
          </a>
        )}
      </form>
    </main>
  );
}
