import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const daySeconds = 86_400;

/** The x axis's span: the first day to the last, or a day either side of a single one. */
export function dayRange(days: readonly number[]): [number, number] {
  const first = days[0] ?? 0;
  const last = days.at(-1) ?? first;
  return first === last ? [first - daySeconds, last + daySeconds] : [first, last];
}

/** Tick steps of the day axis, in seconds. */
const daySteps = [1, 2, 7, 14, 28].map((days) => days * daySeconds);

/** Tick steps for counts. */
const wholeSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000];

export interface TrendSeries {
  label: string;
  values: (number | null)[];
  /** A Tailwind-like colour that reads on light and dark backgrounds alike. */
  color: string;
}

/**
 * One small uPlot line chart over days: its axes and grid take the page's text colour (light or dark theme), and
 * it is as wide as its box (a phone's width too), drawn again when the box changes.
 */
export function TrendChart({
  title,
  days,
  series,
  format,
  top,
  whole = false,
}: {
  title: string;
  /** Days as UTC midnights, in seconds (uPlot's time unit). */
  days: number[];
  series: TrendSeries[];
  format: (value: number) => string;
  /** The y axis's top; by default a little above the highest value (0 always at the bottom). */
  top?: number;
  /** Counts: ticks on whole numbers only (uPlot would put one at 0.5 and `format` show it as another 1). */
  whole?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const ink = getComputedStyle(element).color;
    const grid = "rgba(128,128,128,0.25)";
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 200),
        height: 160,
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
        legend: { show: series.length > 1 },
        cursor: { points: { size: 6 } },
        scales: {
          // From the days given, not from uPlot's own min and max: for one day alone uPlot has widened them
          // already, to about a thousand days, before a range function sees them. One day: a day either side.
          x: { time: true, range: () => dayRange(days) },
          y: { range: (_u, _min, max) => [0, top ?? (max > 0 ? max * 1.15 : 1)] },
        },
        axes: [
          // Ticks a whole number of days apart: the labels name days, and several in one day would repeat it.
          { ...axis, values: "{D} {MMM}" as never, incrs: daySteps },
          {
            ...axis,
            size: 72,
            values: (_u, values) => values.map((value) => format(value)),
            ...(whole ? { incrs: wholeSteps } : {}),
          },
        ],
        series: [
          {},
          ...series.map((item) => ({
            label: item.label,
            stroke: item.color,
            width: 2,
            points: { show: days.length < 2, size: 6, fill: item.color },
            value: (_u: uPlot, value: number | null) => (value === null ? "—" : format(value)),
          })),
        ],
      },
      [days, ...series.map((item) => item.values)],
      element,
    );
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(element.clientWidth, 200), height: 160 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [days, series, format, top, whole]);
  return (
    <figure className="min-w-0 space-y-1">
      <figcaption className="text-sm font-medium">{title}</figcaption>
      <div ref={box} role="img" aria-label={title} className="w-full text-muted" />
    </figure>
  );
}
