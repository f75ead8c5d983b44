/**
 * Where to go after signing in: the page the person was headed for, but only a page of this dashboard. The
 * redirect comes from the URL, which anyone can write into a link: "//elsewhere.example" or "/\elsewhere" must not
 * lead a person who just signed in to another site.
 */
export function afterSignIn(redirect: string | undefined, origin: string): string {
  const fallback = "/runs";
  if (!redirect?.startsWith("/") || redirect.startsWith("//") || redirect.includes("\\")) return fallback;
  let url: URL;
  try {
    url = new URL(redirect, origin);
  } catch {
    return fallback;
  }
  if (url.origin !== origin || url.pathname.startsWith("/sign-in")) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
