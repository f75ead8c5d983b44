// How the dashboard's browser tests sign a person in: the way a person does, through the sign-in page.
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import type { Person } from "./sample-data.ts";

/** Fills in the sign-in form on `page` (at /sign-in) and submits it. */
export async function fillSignIn(page: Page, person: Person): Promise<void> {
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/**
 * Opens `path` in a new browser context (1280×800 unless `options` say otherwise) as `person`: the dashboard sends
 * them to the sign-in page, and back to `path` once signed in. Errors in the page are printed, to explain a failure.
 */
export async function openSignedIn(
  browser: Browser,
  origin: string,
  person: Person,
  path = "/runs",
  options: BrowserContextOptions = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  await page.goto(`${origin}${path}`);
  await page.waitForURL(/\/sign-in/);
  await fillSignIn(page, person);
  await page.waitForURL(`${origin}${path}`);
  return page;
}
