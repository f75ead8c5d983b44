import { useState } from "react";
import { chooseTheme, currentTheme } from "../../app/theme.ts";

/** Switches light and dark; the choice is remembered in this browser and overrides the system's. */
export function ThemeToggle() {
  const [theme, setTheme] = useState(currentTheme);
  const next = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      onClick={() => {
        chooseTheme(next);
        setTheme(next);
      }}
      aria-label={`Use the ${next} theme`}
      title={`Use the ${next} theme`}
      className="rounded-md border border-line px-2 py-1 text-sm hover:bg-sunken"
    >
      <span aria-hidden>{theme === "dark" ? "☀" : "☾"}</span>
    </button>
  );
}
