import { type RefObject, useEffect, useState } from "react";

/**
 * Whether the element has come near the viewport yet (within `margin`); once it has, it stays true. A failure's
 * screenshot, video and logcat are fetched only then: a run with 200 failures does not ask for 600 files at once,
 * and what was loaded is not dropped again when the reader scrolls on.
 */
export function useSeenOnce(element: RefObject<Element | null>, margin = "400px"): boolean {
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const target = element.current;
    if (seen || !target) return;
    if (typeof IntersectionObserver === "undefined") {
      setSeen(true);
      return;
    }
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) {
          setSeen(true);
          observer.disconnect();
        }
      },
      { rootMargin: margin },
    );
    observer.observe(target);
    return () => observer.disconnect();
  }, [element, margin, seen]);
  return seen;
}
