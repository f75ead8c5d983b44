import { useMutation } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId } from "react";
import { ApiProblem } from "../api/problem.ts";
import { signIn } from "../api/session.ts";
import { afterSignIn } from "../app/after-sign-in.ts";
import { signInRoute } from "../app/router.tsx";
import { ThemeToggle } from "./layout/theme-toggle.tsx";

export function SignInPage() {
  const { redirect } = signInRoute.useSearch();
  const navigate = useNavigate();
  const ids = { email: useId(), password: useId(), error: useId() };
  const attempt = useMutation({
    mutationFn: ({ email, password }: { email: string; password: string }) => signIn(email, password),
    onSuccess: () => navigate({ href: afterSignIn(redirect, window.location.origin), replace: true }),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    attempt.mutate({ email: String(form.get("email")), password: String(form.get("password")) });
  };

  const error = attempt.error;
  const message =
    error instanceof ApiProblem && error.status === 401
      ? "The email or the password is wrong."
      : error?.message;
  const fix = error instanceof ApiProblem && error.status !== 401 ? error.problem.fix : undefined;

  return (
    <main className="flex min-h-dvh items-center justify-center p-4">
      <div className="absolute top-3 right-3">
        <ThemeToggle />
      </div>
      <form
        onSubmit={submit}
        aria-describedby={error ? ids.error : undefined}
        className="w-full max-w-sm space-y-4 rounded-lg border border-line bg-surface p-6 shadow-sm"
      >
        <div>
          <h1 className="text-xl font-semibold">Sign in to Testbay</h1>
          <p className="mt-1 text-sm text-muted">Test runs, failures and devices of your organization.</p>
        </div>
        <div className="space-y-1">
          <label htmlFor={ids.email} className="block text-sm font-medium">
            Email
          </label>
          <input
            id={ids.email}
            name="email"
            type="email"
            autoComplete="username"
            required
            className="w-full rounded-md border border-line bg-canvas px-3 py-2"
          />
        </div>
        <div className="space-y-1">
          <label htmlFor={ids.password} className="block text-sm font-medium">
            Password
          </label>
          <input
            id={ids.password}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            aria-invalid={error ? true : undefined}
            className="w-full rounded-md border border-line bg-canvas px-3 py-2"
          />
        </div>
        {error && (
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
      </form>
    </main>
  );
}
