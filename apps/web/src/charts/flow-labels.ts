// What the pipeline graph writes on its nodes and edges (flow-graph.tsx), through the console's one
// number formatter (lib/format.ts): counts with separators (12,345), state in bytes.
import type { TFlowEdge, TFlowNode } from "@sluice/services";
import { formatBytes, formatCount } from "../lib/format";

/** A node's text: its label, its detail, and what a state node holds now. */
export function flowNodeLabel(n: TFlowNode): string {
  const parts = [n.label];
  if (n.detail) parts.push(n.detail);
  if (n.holds) parts.push(`${formatCount(n.holds.rows)} rows now (${formatBytes(n.holds.bytes)})`);
  return parts.join(" · ");
}

/** An edge's count; to a state node, the net change over the range, signed. */
export function flowEdgeLabel(e: TFlowEdge): string {
  if (!e.state) return formatCount(e.rows);
  const sign = e.rows > 0 ? "+" : e.rows < 0 ? "−" : "";
  return `${sign}${formatCount(Math.abs(e.rows))} net in range`;
}
