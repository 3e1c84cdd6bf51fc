/**
 * Axis tick labels drawn as plain SVG text. Recharts' default label measures every tick's text in
 * the DOM (a hidden span per label, forcing layout) to wrap and thin out labels; with a handful of
 * short numeric ticks at `interval={0}` nothing needs measuring, and a run page of nine charts
 * renders without ~100 forced layouts.
 */
interface AxisTickProps {
  x?: number | string;
  y?: number | string;
  payload?: { value: unknown };
  index?: number;
  textAnchor?: "start" | "middle" | "end" | "inherit";
  verticalAnchor?: string;
  fill?: string;
  className?: string;
  tickFormatter?: (value: unknown, index: number) => string;
}

// Recharts' own offsets for one line of text: its cap height, or half of it when centred.
const DY: Record<string, string> = { start: "0.71em", middle: "0.355em", end: "0" };

export function AxisTick(props: AxisTickProps) {
  const value = props.payload?.value;
  const label = props.tickFormatter ? props.tickFormatter(value, props.index ?? 0) : String(value);
  return (
    <text
      x={props.x}
      y={props.y}
      dy={DY[props.verticalAnchor ?? "end"]}
      textAnchor={props.textAnchor}
      fill={props.fill}
      fontSize={12}
      className={props.className}
    >
      {label}
    </text>
  );
}

/** Props for an XAxis/YAxis that draws ticks with AxisTick and never measures text. */
export const plainTicks = { tick: AxisTick, interval: 0 } as const;
