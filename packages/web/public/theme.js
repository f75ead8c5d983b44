// Light or dark before the first paint, so a dark-theme reader never sees a white flash. A file, not an inline
// script: the dashboard's Content-Security-Policy runs only the server's own files. src/app/theme.ts takes over.
try {
  const chosen = localStorage.getItem("testbay-theme");
  const dark = chosen ? chosen === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.classList.toggle("dark", dark);
} catch {
  // storage blocked: the light theme, as without this file
}
