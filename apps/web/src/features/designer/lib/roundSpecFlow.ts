import { START_ID, toGraph, type Graph, type GraphNode, type Node as SpecNode } from "@troupe/dsl";

/**
 * The round-spec graph as React Flow draws it, and back. The dsl owns the graph form
 * (`toGraph` / `fromGraph`); this file only adds positions for drawing and reads a child's
 * position among its siblings from where it is drawn (top to bottom), which is how a person
 * reorders a sequence by dragging.
 */

export type RoundNodeKind = GraphNode["kind"];

export interface RoundNodeData extends Record<string, unknown> {
  kind: RoundNodeKind;
  /** Actor name, or `*` for any actor. */
  name?: string;
  min?: number;
  max?: number;
}

export interface FlowNode {
  id: string;
  type: "round";
  position: { x: number; y: number };
  data: RoundNodeData;
  deletable?: boolean;
}

export interface FlowEdge {
  id: string;
  source: string;
  target: string;
  type: "round";
  data: { weight?: number };
}

export const COLUMN_WIDTH = 190;
export const ROW_HEIGHT = 78;

export const edgeId = (source: string, target: string) => `${source}->${target}`;

/** A left-to-right tree layout: depth picks the column, leaves take rows in order, a parent sits level with its children's middle. */
export function layoutTree(graph: Graph): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const children = new Map<string, string[]>();
  const sorted = [...graph.edges].sort((a, b) => a.order - b.order);
  for (const e of sorted) children.set(e.from, [...(children.get(e.from) ?? []), e.to]);
  const y = new Map<string, number>();
  const depth = new Map<string, number>();
  let nextRow = 0;
  const place = (id: string, d: number): number => {
    depth.set(id, d);
    const kids = children.get(id) ?? [];
    const row = kids.length === 0 ? nextRow++ : kids.map((k) => place(k, d + 1)).reduce((a, b) => a + b, 0) / kids.length;
    y.set(id, row);
    return row;
  };
  place(START_ID, 0);
  // Nodes not reachable from start (a graph being drawn) go below the tree.
  for (const n of graph.nodes) if (!y.has(n.id)) place(n.id, 1);
  const nodes: FlowNode[] = graph.nodes.map((n) => ({
    id: n.id,
    type: "round",
    position: { x: (depth.get(n.id) ?? 0) * COLUMN_WIDTH, y: (y.get(n.id) ?? 0) * ROW_HEIGHT },
    data: dataOf(n),
    ...(n.kind === "start" ? { deletable: false } : {}),
  }));
  const edges: FlowEdge[] = graph.edges.map((e) => ({
    id: edgeId(e.from, e.to),
    source: e.from,
    target: e.to,
    type: "round",
    data: e.weight !== undefined ? { weight: e.weight } : {},
  }));
  return { nodes, edges };
}

function dataOf(n: GraphNode): RoundNodeData {
  switch (n.kind) {
    case "actor":
      return { kind: "actor", name: n.name };
    case "repeat":
      return { kind: "repeat", min: n.min, max: n.max };
    default:
      return { kind: n.kind };
  }
}

export function flowFromSpec(ast: SpecNode): { nodes: FlowNode[]; edges: FlowEdge[] } {
  return layoutTree(toGraph(ast));
}

/**
 * The dsl graph of what is drawn. Siblings are ordered by their drawn position (top to bottom,
 * then left to right); an edge out of a choice carries its weight (1 until the user sets one).
 */
export function graphFromFlow(nodes: readonly FlowNode[], edges: readonly FlowEdge[]): Graph {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const outgoing = new Map<string, FlowEdge[]>();
  for (const e of edges) outgoing.set(e.source, [...(outgoing.get(e.source) ?? []), e]);
  const graphEdges: Graph["edges"] = [];
  for (const [source, out] of outgoing) {
    const parent = byId.get(source);
    const ordered = [...out].sort((a, b) => {
      const pa = byId.get(a.target)?.position ?? { x: 0, y: 0 };
      const pb = byId.get(b.target)?.position ?? { x: 0, y: 0 };
      return pa.y - pb.y || pa.x - pb.x;
    });
    ordered.forEach((e, order) => {
      const weight = parent?.data.kind === "choice" ? Math.max(1, Math.round(e.data.weight ?? 1)) : undefined;
      graphEdges.push({ from: e.source, to: e.target, order, ...(weight !== undefined ? { weight } : {}) });
    });
  }
  const graphNodes: GraphNode[] = nodes.map((n) => {
    const d = n.data;
    switch (d.kind) {
      case "actor":
        return { id: n.id, kind: "actor", name: d.name ?? "" };
      case "repeat":
        return { id: n.id, kind: "repeat", min: d.min ?? 1, max: d.max ?? 1 };
      default:
        return { id: n.id, kind: d.kind };
    }
  });
  return { nodes: graphNodes, edges: graphEdges };
}

/** Which kinds may have children, and how many. */
export const MAX_CHILDREN: Record<RoundNodeKind, number> = {
  start: 1,
  actor: 0,
  repeat: 1,
  sequence: Infinity,
  choice: Infinity,
  parallel: Infinity,
};

/** A fresh node id that the graph does not use yet. */
export function freshNodeId(nodes: readonly { id: string }[]): string {
  const taken = new Set(nodes.map((n) => n.id));
  let k = nodes.length + 1;
  while (taken.has(`g${k}`)) k++;
  return `g${k}`;
}

/**
 * Add a node as the last child of `parentId`: placed one column right of the parent and below
 * its current children, so the drawn order is the order in the spec.
 */
export function appendChild(
  nodes: readonly FlowNode[],
  edges: readonly FlowEdge[],
  parentId: string,
  data: RoundNodeData,
): { nodes: FlowNode[]; edges: FlowEdge[]; id: string } | { error: string } {
  const parent = nodes.find((n) => n.id === parentId);
  if (!parent) return { error: `no node ${parentId}` };
  const kids = edges.filter((e) => e.source === parentId);
  if (kids.length >= MAX_CHILDREN[parent.data.kind]) {
    const label = parent.data.kind === "actor" ? "an actor node has no children" : `a ${parent.data.kind} node takes ${MAX_CHILDREN[parent.data.kind]} child`;
    return { error: `${label}: select a sequence, choice, parallel or repeat node, or delete its child first` };
  }
  const id = freshNodeId(nodes);
  const lowest = kids
    .map((e) => nodes.find((n) => n.id === e.target)?.position.y ?? parent.position.y)
    .reduce((a, b) => Math.max(a, b), -Infinity);
  const position = { x: parent.position.x + COLUMN_WIDTH, y: kids.length === 0 ? parent.position.y : lowest + ROW_HEIGHT };
  const node: FlowNode = { id, type: "round", position, data };
  const edge: FlowEdge = {
    id: edgeId(parentId, id),
    source: parentId,
    target: id,
    type: "round",
    data: parent.data.kind === "choice" ? { weight: 1 } : {},
  };
  return { nodes: [...nodes, node], edges: [...edges, edge], id };
}

/** The start node alone: what an empty round spec draws as. */
export function emptyFlow(): { nodes: FlowNode[]; edges: FlowEdge[] } {
  return { nodes: [{ id: START_ID, type: "round", position: { x: 0, y: 0 }, data: { kind: "start" }, deletable: false }], edges: [] };
}

type FlowLike = { nodes: readonly FlowNode[]; edges: readonly FlowEdge[] };

/** A node's children in spec order (as graphFromFlow reads them: drawn top to bottom, then left to right). */
function childrenOf(flow: FlowLike, id: string): string[] {
  const byId = new Map(flow.nodes.map((n) => [n.id, n]));
  return flow.edges
    .filter((e) => e.source === id)
    .map((e) => e.target)
    .sort((a, b) => {
      const pa = byId.get(a)?.position ?? { x: 0, y: 0 };
      const pb = byId.get(b)?.position ?? { x: 0, y: 0 };
      return pa.y - pb.y || pa.x - pb.x;
    });
}

/**
 * Where a node sits in the tree: the child index at each level from start. When the drawing is rebuilt from
 * the text its node ids change; the selection follows this path instead of falling back to `start` (after
 * which the next "+ Repeat" was refused: start takes one child).
 */
export function pathOf(flow: FlowLike, id: string): number[] | null {
  const walk = (at: string, path: number[]): number[] | null => {
    if (at === id) return path;
    const kids = childrenOf(flow, at);
    for (let i = 0; i < kids.length; i++) {
      const found = walk(kids[i]!, [...path, i]);
      if (found) return found;
    }
    return null;
  };
  return walk(START_ID, []);
}

/** The node at a path (see pathOf), or null when the tree has no such place now. */
export function idAtPath(flow: FlowLike, path: readonly number[]): string | null {
  let at = START_ID;
  for (const i of path) {
    const next = childrenOf(flow, at)[i];
    if (next === undefined) return null;
    at = next;
  }
  return at;
}

/** The selection carried from one drawing to its rebuilt form: same id if it survives, else same place. */
export function carrySelection(before: FlowLike, after: FlowLike, selectedId: string): string | null {
  if (after.nodes.some((n) => n.id === selectedId)) return selectedId;
  const path = pathOf(before, selectedId);
  return path ? idAtPath(after, path) : null;
}
