"use client";
// The pipeline as a graph (React Flow, @xyflow/react): the phases left to right in the engine's order,
// the branches where rows leave below them, and on every edge the rows that took it in the selected
// range. Whether input = sink + every branch is said above it. The same counts are listed under the
// graph as a table (readable without a pointer, and what the browser test compares). A join's rows
// waiting for the dimension hang above the Join phase, with a dashed edge: the rows that
// started waiting less those released over the range (part of the balance), the node what is held now.
import {
  Background,
  BaseEdge,
  EdgeLabelRenderer,
  getBezierPath,
  MarkerType,
  ReactFlow,
  type Edge,
  type EdgeProps,
  type Node,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import type { TPipelineFlow } from "@sluice/services";
import { formatValue } from "@/lib/format";
import { flowEdgeLabel, flowNodeLabel } from "./flow-labels";

// Nodes are 124 px wide (globals.css .flow-node): a step of 214 leaves 90 px between two phases, room for
// the edge's row count ("1,234,567") without covering either box.
const X_STEP = 214;
const BRANCH_Y = 150;
// A join's rows waiting for the dimension hang above the line half a step right of the join, apart from
// the branches below it (held, not gone): below, beside the join's dead-letter branch, the two boxes
// overlapped. Its edge's count is in the node (on the edge it hid behind the join and the sink edge's).
const STATE_Y = -175;

function layout(flow: TPipelineFlow): { nodes: Node[]; edges: Edge[] } {
  const aside = (kind: string) => kind === "branch" || kind === "state";
  const main = flow.nodes.filter((n) => !aside(n.kind));
  const x = new Map(main.map((n, i) => [n.id, i * X_STEP]));
  const branchesOf = new Map<string, number>();
  const nodes: Node[] = flow.nodes.map((n) => {
    const parent = aside(n.kind) ? flow.edges.find((e) => e.to === n.id)?.from : undefined;
    const above = n.kind === "state";
    const nth =
      parent && !above
        ? (branchesOf.set(parent, (branchesOf.get(parent) ?? 0) + 1), branchesOf.get(parent)! - 1)
        : 0;
    // Branches sit below and half a step right of their phase, so the edge and its count stay visible.
    const position = !parent
      ? { x: x.get(n.id) ?? 0, y: 0 }
      : above
        ? { x: (x.get(parent) ?? 0) + X_STEP / 2, y: STATE_Y }
        : { x: (x.get(parent) ?? 0) + X_STEP / 2 + nth * 30, y: BRANCH_Y + nth * 62 };
    return {
      id: n.id,
      position,
      // A state node carries its edge's count too: at the edge's midpoint it sat on the join and the sink edge.
      data: {
        label:
          n.kind === "state"
            ? `${flowNodeLabel(n)} · ${flowEdgeLabel(flow.edges.find((e) => e.to === n.id)!)}`
            : flowNodeLabel(n),
      },
      className: `flow-node flow-node--${n.kind}`,
      draggable: false,
      connectable: false,
      sourcePosition: parent || n.kind === "sink" ? undefined : ("right" as Node["sourcePosition"]),
      targetPosition: (above ? "bottom" : parent ? "top" : "left") as Node["targetPosition"],
      type: n.kind === "source" ? "input" : n.kind === "phase" ? "default" : "output",
    };
  });
  const edges: Edge[] = flow.edges.map((e) => ({
    id: `${e.from}->${e.to}`,
    source: e.from,
    target: e.to,
    type: "count",
    label: e.state ? undefined : flowEdgeLabel(e),
    animated: !e.leaves && !e.state && e.rows > 0,
    style: e.state
      ? { stroke: "#8250df", strokeWidth: 1.2, strokeDasharray: "4 3" }
      : {
          stroke: e.leaves ? (e.rows > 0 ? "#bf8700" : "#d0d7de") : "#1f6feb",
          strokeWidth: e.leaves ? 1.2 : 2,
        },
    markerEnd: { type: MarkerType.ArrowClosed },
  }));
  return { nodes, edges };
}

// An edge whose count is HTML over the graph (EdgeLabelRenderer). React Flow's own SVG label measures
// itself once, when its text changes: measured before the graph was laid out it stays hidden, and on a
// paused pipeline, whose counts never change, every count on the graph stayed hidden.
function CountEdge(props: EdgeProps) {
  const [path, labelX, labelY] = getBezierPath(props);
  return (
    <>
      <BaseEdge id={props.id} path={path} style={props.style} markerEnd={props.markerEnd} />
      {props.label ? (
        <EdgeLabelRenderer>
          <div
            className="flow-edge-label"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            {props.label}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
}
const EDGE_TYPES = { count: CountEdge };

export function FlowGraph({ flow }: { flow: TPipelineFlow }) {
  const { nodes, edges } = layout(flow);
  const labelOf = new Map(flow.nodes.map((n) => [n.id, n.label]));
  const waitingTerm = flow.nodes.some((n) => n.kind === "state")
    ? " + rows left waiting for the dimension (net)"
    : "";
  return (
    <div
      data-testid="flow"
      data-input={flow.input}
      data-outcomes={flow.outcomes}
      data-waiting={flow.waiting}
      data-balanced={flow.balanced}
    >
      <p className={flow.balanced ? "small" : "small bad"} data-testid="flow-balance">
        {flow.balanced
          ? `Balanced: input ${formatValue(flow.input, "count", true)} = sink + every branch${waitingTerm} (${formatValue(flow.outcomes, "count", true)}); every batch in the range added up.`
          : `NOT balanced: input ${formatValue(flow.input, "count", true)} ≠ outcomes ${formatValue(flow.outcomes, "count", true)} — rows are unaccounted for; check the batches in this range.`}
      </p>
      {flow.warnings.length > 0 ? (
        <p className="small muted">
          Kept but counted (warn expectations):{" "}
          {flow.warnings.map((w) => `${w.name} ${formatValue(w.rows, "count", true)}`).join(" · ")}
        </p>
      ) : null}
      <div className="flow">
        <ReactFlow
          nodes={nodes}
          edges={edges}
          edgeTypes={EDGE_TYPES}
          fitView
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          proOptions={{ hideAttribution: true }}
          minZoom={0.3}
        >
          <Background gap={24} color="#eaeef2" />
        </ReactFlow>
      </div>
      <details className="small">
        <summary>Rows per edge</summary>
        <table className="table" data-testid="flow-edges">
          <thead>
            <tr>
              <th>From</th>
              <th>To</th>
              <th className="num">Rows</th>
            </tr>
          </thead>
          <tbody>
            {flow.edges.map((e) => (
              <tr
                key={`${e.from}->${e.to}`}
                data-from={e.from}
                data-to={e.to}
                data-rows={e.rows}
                data-leaves={e.leaves}
                data-state={e.state === true}
              >
                <td>{labelOf.get(e.from)}</td>
                <td>{labelOf.get(e.to)}</td>
                <td className="num mono">
                  {formatValue(e.rows, "count", true)}
                  {e.state ? <span className="muted"> net: started waiting less released</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}
