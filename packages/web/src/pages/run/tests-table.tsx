import { useQuery } from "@tanstack/react-query";
import {
  type ColumnDef,
  flexRender,
  getCoreRowModel,
  getFilteredRowModel,
  getSortedRowModel,
  type SortingState,
  useReactTable,
} from "@tanstack/react-table";
import { useId, useMemo, useRef, useState } from "react";
import { allTestsQuery, executionQuery } from "../../api/executions.ts";
import type { TestCase } from "../../api/types.ts";
import { useMediaQuery } from "../../app/use-media-query.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { useFixedHeightRows } from "../../components/use-fixed-height-rows.ts";
import { formatDuration } from "../../format/duration.ts";
import { deviceLabel } from "./device-label.ts";
import { QuarantinedBadge } from "./quarantined-badge.tsx";
import { shardCounts } from "./shards.ts";

/** The table's columns; the device column names each test's shard, given the run's shards per device entry. */
const columnsFor = (shards: readonly number[] | undefined): ColumnDef<TestCase>[] => [
  {
    id: "status",
    header: "Status",
    accessorKey: "status",
    // Wide enough for a failed, flaky or quarantined test's chips side by side.
    size: 184,
    cell: ({ row }) => (
      <span className="flex gap-1">
        <StatusChip status={row.original.status} />
        {row.original.flaky && <StatusChip status="flaky" />}
        {row.original.quarantined && <QuarantinedBadge />}
      </span>
    ),
  },
  {
    id: "test",
    header: "Test",
    // Searched as "classname name", so either half (or a whole test id) finds it.
    accessorFn: (test) => `${test.classname} ${test.name}`,
    // A phone shows the name and the class on lines of their own, the class without its package (the part that
    // says least), so neither is cut to a few letters; the whole ID is in the title and the search.
    cell: ({ row }) => (
      <span className="block" title={`${row.original.classname}#${row.original.name}`}>
        <span className="block truncate font-medium sm:inline">{row.original.name}</span>{" "}
        <span className="block truncate text-muted sm:hidden">{simpleClassName(row.original.classname)}</span>
        <span className="hidden text-muted sm:inline">{row.original.classname}</span>
      </span>
    ),
  },
  { id: "device", header: "Device", accessorFn: (test) => deviceLabel(test, shards), size: 200 },
  {
    id: "duration",
    header: "Duration",
    accessorFn: (test) => test.duration_ms ?? -1,
    size: 88,
    cell: ({ row }) => (row.original.duration_ms === null ? "—" : formatDuration(row.original.duration_ms)),
  },
];

/** `com.example.checkout.CartTest` → `CartTest`. */
const simpleClassName = (classname: string) => classname.slice(classname.lastIndexOf(".") + 1);

/**
 * Rows are all the same height, which lets the virtualizer place 5,000 of them without measuring: one line from
 * 640 px, two on a phone.
 */
const rowHeights = { wide: 36, phone: 52 };

/** Every test of the run, searchable and sortable; only the rows in view are in the page. */
export function TestsTable({ runId, live }: { runId: string; live: boolean }) {
  const tests = useQuery(allTestsQuery(runId, live));
  const devices = useQuery(executionQuery(runId)).data?.devices;
  // Joined to a string so the columns are made again only when the shards change, not on every poll of the run.
  const shardsKey = devices ? shardCounts(devices).join() : "";
  const columns = useMemo(
    () => columnsFor(shardsKey ? shardsKey.split(",").map(Number) : undefined),
    [shardsKey],
  );
  const [search, setSearch] = useState("");
  const [sorting, setSorting] = useState<SortingState>([]);
  const searchId = useId();
  const scroller = useRef<HTMLDivElement>(null);
  const rowHeight = useMediaQuery("(min-width: 640px)") ? rowHeights.wide : rowHeights.phone;

  const table = useReactTable({
    data: tests.data ?? [],
    columns,
    state: { globalFilter: search, sorting },
    onSortingChange: setSorting,
    globalFilterFn: "includesString",
    getCoreRowModel: getCoreRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });
  const rows = table.getRowModel().rows;
  const { visible, before, after } = useFixedHeightRows(rows.length, scroller, rowHeight);

  return (
    <section aria-labelledby="all-tests" className="space-y-2">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <h2 id="all-tests" className="text-lg font-semibold">
          All tests{tests.data && ` (${tests.data.length})`}
        </h2>
        <div className="flex flex-col gap-1">
          <label htmlFor={searchId} className="text-xs text-muted">
            Search tests
          </label>
          <input
            id={searchId}
            type="search"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
            placeholder="class or test name"
            className="w-64 max-w-full rounded-md border border-line bg-surface px-2 py-1.5 text-sm"
          />
        </div>
      </div>
      {tests.error && <ProblemMessage error={tests.error} />}
      {tests.isPending && <p className="text-sm text-muted">Loading tests…</p>}
      {tests.data && (
        <div ref={scroller} className="max-h-[32rem] overflow-auto rounded-lg border border-line bg-surface">
          <table className="w-full table-fixed text-sm" aria-rowcount={rows.length + 1}>
            <colgroup>
              {table.getVisibleLeafColumns().map((column) => (
                <col
                  key={column.id}
                  // The device column is hidden on a phone: its <col> too, or it would keep its width.
                  className={column.id === "device" ? "hidden sm:table-column" : undefined}
                  style={column.id === "test" ? undefined : { width: column.getSize() }}
                />
              ))}
            </colgroup>
            <thead className="sticky top-0 z-[1] border-b border-line bg-surface text-left text-muted">
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => {
                    const sorted = header.column.getIsSorted();
                    return (
                      <th
                        key={header.id}
                        scope="col"
                        aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none"}
                        className={`px-3 py-2 font-medium ${header.id === "device" ? "hidden sm:table-cell" : ""}`}
                      >
                        <button
                          type="button"
                          onClick={header.column.getToggleSortingHandler()}
                          className="hover:text-ink"
                        >
                          {flexRender(header.column.columnDef.header, header.getContext())}
                          {sorted === "asc" ? " ↑" : sorted === "desc" ? " ↓" : ""}
                        </button>
                      </th>
                    );
                  })}
                </tr>
              ))}
            </thead>
            <tbody>
              {before > 0 && <tr style={{ height: before }} aria-hidden />}
              {visible.map((item) => {
                const row = rows[item.index];
                if (!row) return null;
                return (
                  <tr
                    key={row.id}
                    style={{ height: rowHeight }}
                    aria-rowindex={item.index + 2}
                    className="border-b border-line last:border-0"
                  >
                    {row.getVisibleCells().map((cell) => (
                      <td
                        key={cell.id}
                        className={`truncate px-3 ${cell.column.id === "device" ? "hidden sm:table-cell" : ""}`}
                      >
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </td>
                    ))}
                  </tr>
                );
              })}
              {after > 0 && <tr style={{ height: after }} aria-hidden />}
            </tbody>
          </table>
          {rows.length === 0 && (
            <p className="p-3 text-sm text-muted">
              {search ? "No test matches the search." : "No tests reported yet."}
            </p>
          )}
        </div>
      )}
    </section>
  );
}
