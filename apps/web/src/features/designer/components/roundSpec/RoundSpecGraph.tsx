"use client";

import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  Controls,
  ReactFlow,
  type Connection,
  type EdgeChange,
  type NodeChange,
  type ReactFlowInstance,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useRef, useState } from "react";
import { appendChild, carrySelection, edgeId, type FlowEdge, type FlowNode, type RoundNodeData } from "../../lib/roundSpecFlow";
import { EDGE_TYPES, NODE_TYPES, RoundGraphContext, type RoundGraphEditing } from "./RoundSpecNodes";

export interface FlowState {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

/**
 * The round spec drawn as a tree (React Flow). Draw by dragging from a node's right handle to
 * another node's left handle, or, from the keyboard, select a node (Tab, Enter) and add a child
 * with the buttons: the child goes last among its siblings. Siblings run top to bottom; drag to
 * reorder. Delete removes the selected node or edge.
 */
export function RoundSpecGraph(props: {
  flow: FlowState;
  actors: string[];
  /** `structural`: the spec may have changed (not just a selection or a size). */
  onChange(next: FlowState, structural: boolean): void;
  onTidy(): void;
  /** Changes when the drawing is rebuilt from the text: the view is fitted to it again. */
  fitKey: number;
}) {
  const { flow, onChange } = props;
  const instance = useRef<ReactFlowInstance<FlowNode, FlowEdge> | null>(null);
  const [addedCount, setAddedCount] = useState(0);
  useEffect(() => {
    // After React Flow has measured the new nodes.
    const t = setTimeout(() => void instance.current?.fitView({ padding: 0.2, maxZoom: 1.1 }), 50);
    return () => clearTimeout(t);
  }, [props.fitKey, addedCount]);
  const [selectedId, setSelectedId] = useState<string>("start");
  const [actorToAdd, setActorToAdd] = useState<string>("");
  const [addError, setAddError] = useState<string | null>(null);
  // The text redraws the graph with new node ids: keep the selection at the same place in the tree. The anchor
  // is the last drawing the selection was found in, so a text that briefly has no such place (cleared before
  // retyping) does not lose it.
  const anchor = useRef({ flow, id: selectedId });
  const carried = flow.nodes.some((n) => n.id === selectedId) ? selectedId : carrySelection(anchor.current.flow, flow, anchor.current.id);
  const selected = flow.nodes.find((n) => n.id === carried) ?? flow.nodes[0];
  useEffect(() => {
    if (carried === null) return;
    anchor.current = { flow, id: carried };
    if (carried !== selectedId) setSelectedId(carried);
  }, [flow, carried, selectedId]);
  const firstActor = actorToAdd || props.actors[0] || "*";

  const editing: RoundGraphEditing = useMemo(
    () => ({
      actors: props.actors,
      updateNode: (id, patch) =>
        onChange({ ...flow, nodes: flow.nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, ...patch } } : n)) }, true),
      updateWeight: (id, weight) =>
        onChange({ ...flow, edges: flow.edges.map((e) => (e.id === id ? { ...e, data: { ...e.data, weight } } : e)) }, true),
      sourceKind: (id) => {
        const edge = flow.edges.find((e) => e.id === id);
        return flow.nodes.find((n) => n.id === edge?.source)?.data.kind;
      },
    }),
    [flow, onChange, props.actors],
  );

  function onNodesChange(changes: NodeChange<FlowNode>[]) {
    const structural = changes.some((c) => c.type === "remove" || (c.type === "position" && !c.dragging) || c.type === "add");
    for (const c of changes) if (c.type === "select" && c.selected) setSelectedId(c.id);
    const nodes = applyNodeChanges(changes, flow.nodes);
    // A removed node takes its edges with it.
    const ids = new Set(nodes.map((n) => n.id));
    const edges = flow.edges.filter((e) => ids.has(e.source) && ids.has(e.target));
    onChange({ nodes, edges }, structural);
  }

  function onEdgesChange(changes: EdgeChange<FlowEdge>[]) {
    const structural = changes.some((c) => c.type === "remove" || c.type === "add");
    onChange({ ...flow, edges: applyEdgeChanges(changes, flow.edges) }, structural);
  }

  function onConnect(connection: Connection) {
    const source = flow.nodes.find((n) => n.id === connection.source);
    // A node has one parent: a new connection into it replaces the old one.
    const kept = flow.edges.filter((e) => e.target !== connection.target);
    const edge: FlowEdge = {
      id: edgeId(connection.source, connection.target),
      source: connection.source,
      target: connection.target,
      type: "round",
      data: source?.data.kind === "choice" ? { weight: 1 } : {},
    };
    onChange({ ...flow, edges: addEdge(edge, kept) as FlowEdge[] }, true);
  }

  function add(data: RoundNodeData) {
    if (!selected) return;
    const result = appendChild(flow.nodes, flow.edges, selected.id, data);
    if ("error" in result) {
      setAddError(result.error);
      return;
    }
    setAddError(null);
    setAddedCount((n) => n + 1);
    // Keep adding under a container; after adding under an actor-less start, select the new container.
    if (data.kind !== "actor") setSelectedId(result.id);
    onChange({ nodes: result.nodes.map((n) => ({ ...n, selected: n.id === (data.kind !== "actor" ? result.id : selected.id) })), edges: result.edges }, true);
  }

  return (
    <RoundGraphContext.Provider value={editing}>
      <div className="rs-toolbar" role="toolbar" aria-label="Round-spec graph tools">
        <span className="muted small" data-testid="rs-selected">
          Add under: <b>{selected ? describe(selected) : "—"}</b>
        </span>
        <select aria-label="Actor to add" value={firstActor} onChange={(e) => setActorToAdd(e.target.value)}>
          {props.actors.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
          <option value="*">* (any actor)</option>
        </select>
        <button type="button" className="secondary" onClick={() => add({ kind: "actor", name: firstActor })}>
          + Actor
        </button>
        <button type="button" className="secondary" onClick={() => add({ kind: "sequence" })}>
          + Sequence
        </button>
        <button type="button" className="secondary" onClick={() => add({ kind: "choice" })}>
          + Choice
        </button>
        <button type="button" className="secondary" onClick={() => add({ kind: "repeat", min: 1, max: 3 })}>
          + Repeat
        </button>
        <button type="button" className="secondary" onClick={() => add({ kind: "parallel" })}>
          + Parallel
        </button>
        <button type="button" className="secondary" onClick={props.onTidy} title="Lay the tree out again">
          Tidy
        </button>
      </div>
      {addError && (
        <div className="form-error" role="alert" data-testid="rs-add-error">
          {addError}
        </div>
      )}
      <div className="rs-canvas" data-testid="rs-canvas">
        <ReactFlow
          nodes={flow.nodes}
          edges={flow.edges}
          nodeTypes={NODE_TYPES}
          edgeTypes={EDGE_TYPES}
          onNodesChange={onNodesChange}
          onEdgesChange={onEdgesChange}
          onConnect={onConnect}
          onNodeClick={(_, node) => setSelectedId(node.id)}
          onInit={(i) => {
            instance.current = i;
          }}
          deleteKeyCode={["Delete", "Backspace"]}
          fitView
          fitViewOptions={{ padding: 0.2, maxZoom: 1.1 }}
          minZoom={0.2}
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={16} />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
    </RoundGraphContext.Provider>
  );
}

function describe(node: FlowNode): string {
  if (node.data.kind === "actor") return `actor ${node.data.name}`;
  return node.data.kind;
}
