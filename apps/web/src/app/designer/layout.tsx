import type { ReactNode } from "react";
import { DesignerTabs } from "../../features/designer/components/DesignerTabs";
import "../../features/designer/designer.css";

/** The designer: reusable parts of a RunSpec (actors, datasets, rewards, environments) and experiments. */
export default function DesignerLayout({ children }: { children: ReactNode }) {
  return (
    <div className="designer">
      <div className="section-head">
        <h1>Designer</h1>
        <span className="muted small">Every part here is a piece of a RunSpec; an experiment puts them together.</span>
      </div>
      <DesignerTabs />
      {children}
    </div>
  );
}
