import { useVirtualizer } from "@tanstack/react-virtual";
import { type RefObject, useEffect } from "react";

/**
 * The rows of a long list of equal-height rows that are in view (or near it) in `scroller`, and the space to
 * leave before and after them, so thousands of rows cost only the few drawn (the run's tests, a session's
 * commands). `rowHeight` may change with the screen (a phone turned to landscape): the rows are placed again.
 */
export function useFixedHeightRows(
  count: number,
  scroller: RefObject<HTMLElement | null>,
  rowHeight: number,
) {
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the virtualizer reads rowHeight through estimateSize
  useEffect(() => virtualizer.measure(), [virtualizer, rowHeight]);
  const visible = virtualizer.getVirtualItems();
  const before = visible[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (visible.at(-1)?.end ?? 0);
  return { visible, before, after };
}
