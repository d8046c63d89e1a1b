// The list as an ARIA grid for the keyboard: one tab stop for the whole table, the arrow keys (and
// Home, End) move between cells, and a cell's link, checkbox or button is what takes the focus.
// Applied to the table's DOM after each render, so the rows stay plain markup.

import type { RefObject } from "preact";
import { useEffect, useRef } from "preact/hooks";

const CONTROL = "a, button, input, select";

/** What a cell gives the focus to: its control, or the cell itself. */
function target(cell: Element): HTMLElement {
  return (cell.querySelector(CONTROL) as HTMLElement | null) ?? (cell as HTMLElement);
}

function cellsOf(table: HTMLTableElement): Element[][] {
  return [...table.rows].map((row) => [...row.cells]);
}

/** Roving focus over `table`'s cells; returns the ref to put on the table. */
export function useGridKeys(): RefObject<HTMLTableElement> {
  const table = useRef<HTMLTableElement>(null);
  const active = useRef<[number, number]>([1, 0]);
  // After every render: every control out of the tab order but the active cell's.
  useEffect(() => {
    const grid = table.current;
    if (!grid) return;
    const cells = cellsOf(grid);
    for (const row of cells)
      for (const cell of row) {
        (cell as HTMLElement).tabIndex = -1;
        for (const control of cell.querySelectorAll<HTMLElement>(CONTROL)) control.tabIndex = -1;
      }
    const [r, c] = active.current;
    const cell = cells[Math.min(r, cells.length - 1)]?.[c] ?? cells[0]?.[0];
    if (cell) target(cell).tabIndex = 0;
  });
  useEffect(() => {
    const grid = table.current;
    if (!grid) return;
    const move = (event: KeyboardEvent) => {
      const cell = (event.target as Element).closest("td, th");
      if (!cell || !grid.contains(cell)) return;
      const cells = cellsOf(grid);
      const r = cells.findIndex((row) => row.includes(cell));
      const c = cells[r]!.indexOf(cell);
      const last = cells.length - 1;
      const moves: Record<string, [number, number]> = {
        ArrowDown: [Math.min(r + 1, last), c],
        ArrowUp: [Math.max(r - 1, 0), c],
        ArrowRight: [r, Math.min(c + 1, cells[r]!.length - 1)],
        ArrowLeft: [r, Math.max(c - 1, 0)],
        Home: [r, 0],
        End: [r, cells[r]!.length - 1],
      };
      const to = moves[event.key];
      if (!to) return;
      // Right-to-left pages mirror the columns: the arrows follow what she sees.
      if (
        getComputedStyle(grid).direction === "rtl" &&
        (event.key === "ArrowRight" || event.key === "ArrowLeft")
      )
        to[1] = event.key === "ArrowRight" ? Math.max(c - 1, 0) : Math.min(c + 1, cells[r]!.length - 1);
      const next = cells[to[0]]?.[to[1]];
      if (!next) return;
      event.preventDefault();
      target(cell).tabIndex = -1;
      const focus = target(next);
      focus.tabIndex = 0;
      focus.focus();
      active.current = to;
    };
    grid.addEventListener("keydown", move);
    return () => grid.removeEventListener("keydown", move);
  });
  return table;
}
