/** The frozen RunSpec, as JSON text. */
export function SpecPanel({ spec, open = false }: { spec: unknown; open?: boolean }) {
  return (
    <section className="panel">
      <details open={open}>
        <summary>Run spec (frozen at launch)</summary>
        <pre className="spec" data-testid="run-spec">
          {JSON.stringify(spec, null, 2)}
        </pre>
      </details>
    </section>
  );
}
