"use client";

import { Background, Controls, Handle, Position, ReactFlow, type Node, type NodeProps } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { createContext, useContext, useMemo, useState } from "react";
import { formatMetric } from "../../../lib/format";
import { COLUMN_WIDTH, layoutTree, ROW_HEIGHT, type RoundNodeData } from "../../designer/lib/roundSpecFlow";
import { TITLES } from "../../designer/components/roundSpec/RoundSpecNodes";
import "../../designer/components/roundSpec/roundSpec.css";
import "./transcriptGraph.css";
import { excerpt, mapTurns, turnsByNode, type PlacedTurn, type TurnMessage } from "../lib/roundSpecTurns";
import { actorColour } from "../lib/specNames";

/** What a node of the transcript graph draws: its round-spec node and the turns spoken there. */
interface TurnNodeData extends RoundNodeData {
  visits: PlacedTurn[];
}

interface GraphView {
  messages: readonly TurnMessage[];
  actors: readonly string[];
  selected: number | null;
  select(message: number): void;
}

const GraphViewContext = createContext<GraphView | null>(null);

/** Wider columns and taller rows than the designer's: each node lists the turns spoken at it. */
const COLUMN = 165;
const LINE = 42;

/**
 * A transcript drawn on its environment's round spec (the designer's tree layout and node styles): at each
 * actor node, every turn spoken there with who spoke, a short excerpt, and the speaker's reward and
 * advantage; clicking a turn shows its message below. Read only.
 */
export function TranscriptGraph(props: { roundSpec: string; messages: readonly TurnMessage[]; actors: readonly string[] }) {
  const mapping = useMemo(() => mapTurns(props.roundSpec, props.messages), [props.roundSpec, props.messages]);
  const [selected, setSelected] = useState<number | null>(null);
  const flow = useMemo(() => {
    if (!mapping) return null;
    const byNode = turnsByNode(mapping);
    const tallest = Math.max(1, ...[...byNode.values()].map((v) => v.length));
    const drawn = layoutTree(mapping.graph);
    const nodes: Node<TurnNodeData, "turn">[] = drawn.nodes.map((n) => ({
      id: n.id,
      type: "turn",
      position: { x: (n.position.x / COLUMN_WIDTH) * COLUMN, y: (n.position.y / ROW_HEIGHT) * (ROW_HEIGHT + 12 + LINE * (tallest - 1)) },
      data: { ...n.data, visits: byNode.get(n.id) ?? [] },
      // Read only (nothing selectable or draggable), so React Flow would let clicks through to the pane: the turns are buttons.
      style: { pointerEvents: "all" as const },
      draggable: false,
      connectable: false,
    }));
    return { nodes, edges: drawn.edges.map((e) => ({ id: e.id, source: e.source, target: e.target })) };
  }, [mapping]);
  if (!mapping || !flow) return <p className="muted">The round spec does not parse: nothing to draw the transcript on.</p>;
  const message = selected !== null ? props.messages[selected] : undefined;
  const view: GraphView = { messages: props.messages, actors: props.actors, selected, select: setSelected };
  return (
    <GraphViewContext.Provider value={view}>
      <div className="muted small" data-testid="transcript-graph-summary">
        {mapping.placed.length} turn{mapping.placed.length === 1 ? "" : "s"} on <code>{props.roundSpec}</code>
        {!mapping.complete && mapping.unplaced.length === 0 && " (the conversation ended before the round spec did)"}
        {mapping.unplaced.length > 0 && ` — ${mapping.unplaced.length} turn(s) the round spec does not explain are not drawn`}
      </div>
      <div className="rs-canvas transcript-graph" data-testid="transcript-graph">
        <ReactFlow
          nodes={flow.nodes}
          edges={flow.edges}
          nodeTypes={NODE_TYPES}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          fitView
          fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
          minZoom={0.2}
          proOptions={{ hideAttribution: true }}
        >
          <Background gap={16} />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
      {message ? (
        <div className="turn trained" data-testid="transcript-graph-message" style={{ ["--actor" as string]: actorColour(props.actors, message.actor) }}>
          <div className="who">
            <b style={{ color: actorColour(props.actors, message.actor) }}>{message.actor}</b>
            {message.turn !== undefined && <span>turn {message.turn}</span>}
            {message.reward !== undefined && <span>reward {formatMetric(message.reward)}</span>}
            {message.advantage !== undefined && <span>adv {formatMetric(message.advantage)}</span>}
          </div>
          <pre>{message.content === "" ? "(empty)" : message.content}</pre>
        </div>
      ) : (
        <p className="muted small">Click a turn on the graph to read its message.</p>
      )}
    </GraphViewContext.Provider>
  );
}

/** One round-spec node; an actor node lists the turns spoken at it, each a button that shows the message. */
function TurnNode({ id, data }: NodeProps<Node<TurnNodeData, "turn">>) {
  const view = useContext(GraphViewContext)!;
  return (
    <div className={`rs-node rs-node-${data.kind} tg-node`} data-testid={`tg-node-${data.kind}`} data-node-id={id} data-turns={data.visits.map((v) => v.turn).join(",")}>
      {data.kind !== "start" && <Handle type="target" position={Position.Left} isConnectable={false} />}
      <div className="rs-node-title">
        {TITLES[data.kind]}
        {data.kind === "actor" && <> {data.name}</>}
        {data.kind === "repeat" && ` ${data.min === data.max ? `×${data.min}` : `×${data.min}..${data.max}`}`}
      </div>
      {data.visits.map((v) => {
        const m = view.messages[v.message]!;
        const colour = actorColour(view.actors, m.actor);
        return (
          <button
            type="button"
            key={v.message}
            className={`tg-turn nodrag${view.selected === v.message ? " selected" : ""}`}
            style={{ borderLeftColor: colour }}
            onClick={() => view.select(v.message)}
            data-testid="tg-turn"
            data-turn={v.turn}
            aria-pressed={view.selected === v.message}
            title={m.content}
          >
            <span className="tg-head">
              <b style={{ color: colour }}>{m.actor}</b> · turn {v.turn}
              {m.reward !== undefined && <> · r {formatMetric(m.reward)}</>}
              {m.advantage !== undefined && <> · adv {formatMetric(m.advantage)}</>}
            </span>
            <span className="tg-excerpt">{excerpt(m.content)}</span>
          </button>
        );
      })}
      {data.kind !== "actor" && <Handle type="source" position={Position.Right} isConnectable={false} />}
    </div>
  );
}

const NODE_TYPES = { turn: TurnNode };
