/**
 * Light or dark: the reader's choice (kept in localStorage) wins, otherwise the system's. index.html applies it
 * before the first paint; this module keeps it in step afterwards.
 */
export type Theme = "light" | "dark";

const storageKey = "testbay-theme";
const systemDark = () => window.matchMedia("(prefers-color-scheme: dark)");

function chosenTheme(): Theme | undefined {
  const value = localStorage.getItem(storageKey);
  return value === "light" || value === "dark" ? value : undefined;
}

export function currentTheme(): Theme {
  return document.documentElement.classList.contains("dark") ? "dark" : "light";
}

function apply(theme: Theme): void {
  document.documentElement.classList.toggle("dark", theme === "dark");
}

export function chooseTheme(theme: Theme): void {
  localStorage.setItem(storageKey, theme);
  apply(theme);
}

/** Until the reader chooses, a change of the system's setting (an evening switch to dark) shows at once. */
export function followSystemTheme(): void {
  systemDark().addEventListener("change", (event) => {
    if (!chosenTheme()) apply(event.matches ? "dark" : "light");
  });
}
