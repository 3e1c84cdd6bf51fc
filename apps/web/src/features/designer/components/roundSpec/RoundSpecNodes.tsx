"use client";

import {
  BaseEdge,
  EdgeLabelRenderer,
  getBezierPath,
  Handle,
  Position,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import { createContext, useContext } from "react";
import type { RoundNodeData } from "../../lib/roundSpecFlow";

/** What the drawn nodes need from the editor: the environment's actors and a way to change a node or weight. */
export interface RoundGraphEditing {
  actors: string[];
  updateNode(id: string, patch: Partial<RoundNodeData>): void;
  updateWeight(edgeId: string, weight: number): void;
  /** Parent kind of each edge's source, so only edges out of a choice show a weight. */
  sourceKind(edgeId: string): RoundNodeData["kind"] | undefined;
}

export const RoundGraphContext = createContext<RoundGraphEditing | null>(null);

function useEditing(): RoundGraphEditing {
  const ctx = useContext(RoundGraphContext);
  if (!ctx) throw new Error("RoundGraphContext missing");
  return ctx;
}

/** What each kind of node is called where it is drawn (the designer, the transcript graph). */
export const TITLES: Record<RoundNodeData["kind"], string> = {
  start: "Start",
  actor: "Actor",
  sequence: "Sequence →",
  choice: "Choice /",
  parallel: "Parallel &",
  repeat: "Repeat *",
};

const HINTS: Partial<Record<RoundNodeData["kind"], string>> = {
  sequence: "children in order, top to bottom",
  choice: "one child, drawn by weight",
  parallel: "children act in the same turn",
};

type RoundFlowNode = Node<RoundNodeData, "round">;

/** One node of the round spec. Inputs are `nodrag` so typing in them does not move the node. */
export function RoundNode({ id, data, selected }: NodeProps<RoundFlowNode>) {
  const editing = useEditing();
  const names = [...new Set([...editing.actors, ...(data.name && data.name !== "*" ? [data.name] : [])])];
  return (
    <div className={`rs-node rs-node-${data.kind}${selected ? " selected" : ""}`} data-testid={`rs-node-${data.kind}`} data-node-id={id}>
      {data.kind !== "start" && <Handle type="target" position={Position.Left} />}
      <div className="rs-node-title">{TITLES[data.kind]}</div>
      {data.kind === "actor" && (
        <select
          className="nodrag"
          aria-label="Actor"
          value={data.name ?? ""}
          onChange={(e) => editing.updateNode(id, { name: e.target.value })}
        >
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
          <option value="*">* (any actor)</option>
        </select>
      )}
      {data.kind === "repeat" && (
        <div className="rs-range">
          <input
            className="nodrag"
            type="number"
            min={0}
            aria-label="Repeat at least"
            value={data.min ?? 1}
            onChange={(e) => editing.updateNode(id, { min: Math.max(0, Math.floor(Number(e.target.value) || 0)) })}
          />
          <span>..</span>
          <input
            className="nodrag"
            type="number"
            min={1}
            aria-label="Repeat at most"
            value={data.max ?? 1}
            onChange={(e) => editing.updateNode(id, { max: Math.max(0, Math.floor(Number(e.target.value) || 0)) })}
          />
          <span className="muted small">times</span>
        </div>
      )}
      {HINTS[data.kind] && <div className="rs-node-hint">{HINTS[data.kind]}</div>}
      {data.kind !== "actor" && <Handle type="source" position={Position.Right} />}
    </div>
  );
}

type RoundFlowEdge = Edge<{ weight?: number }, "round">;

/** An edge; out of a choice it carries the option's weight, editable in place. */
export function RoundEdge(props: EdgeProps<RoundFlowEdge>) {
  const editing = useEditing();
  const [path, labelX, labelY] = getBezierPath(props);
  const isChoice = editing.sourceKind(props.id) === "choice";
  return (
    <>
      <BaseEdge id={props.id} path={path} {...(props.markerEnd ? { markerEnd: props.markerEnd } : {})} />
      {isChoice && (
        <EdgeLabelRenderer>
          <label
            className="rs-weight nodrag nopan"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            <span>w</span>
            <input
              type="number"
              min={1}
              aria-label="Choice weight"
              value={props.data?.weight ?? 1}
              onChange={(e) => editing.updateWeight(props.id, Math.max(1, Math.floor(Number(e.target.value) || 1)))}
            />
          </label>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const NODE_TYPES = { round: RoundNode };
export const EDGE_TYPES = { round: RoundEdge };
