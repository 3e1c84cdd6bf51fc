"use client";

import Link from "next/link";
import { useState } from "react";
import type { ExperimentListItem } from "../server/schemas";
import { LaunchForm } from "./LaunchForm";
import { LaunchOpenButton } from "./LaunchOpenButton";
import { DescriptionText } from "./DescriptionText";

export function ExperimentCard({ experiment }: { experiment: ExperimentListItem }) {
  const [launching, setLaunching] = useState(false);
  const s = experiment.summary;
  return (
    <article className="panel card" data-testid="experiment-card" data-experiment-id={experiment.id}>
      <div className="card-title">
        <h3>
          <Link href={`/experiments/${experiment.id}`}>{experiment.name}</Link>
        </h3>
        {experiment.isDemo && <span className="badge badge-demo">demo</span>}
      </div>
      {experiment.description && <p className="muted small" style={{ margin: 0 }}><DescriptionText text={experiment.description} /></p>}
      {s ? (
        <dl>
          <dt>Actors</dt>
          <dd>
            {s.actors.map((a) => (
              <div key={a.name}>
                <b>{a.name}</b> · {a.model} · {a.backend}
                {a.trainable ? " · trainable" : " · frozen"}
              </div>
            ))}
          </dd>
          <dt>Environments</dt>
          <dd>
            {s.environments.map((e) => (
              <div key={e.name}>
                <b>{e.name}</b> ({e.kind.replace("_", "-")}): {e.roundSpec ?? e.actors.join(", ")}
              </div>
            ))}
          </dd>
          <dt>Training</dt>
          <dd>
            {s.algorithm.toUpperCase()} · group {s.groupSize} · {s.steps} steps · seed {s.seed} · {s.device}
          </dd>
          <dt>Runs</dt>
          <dd>{experiment.runCount}</dd>
        </dl>
      ) : (
        <div className="form-error">This experiment&apos;s spec does not validate: {experiment.specError}</div>
      )}
      {launching ? (
        <LaunchForm
          experimentId={experiment.id}
          defaultSteps={s?.steps ?? null}
          defaultSeed={s?.seed ?? null}
          onCancel={() => setLaunching(false)}
        />
      ) : (
        <div className="card-actions">
          <LaunchOpenButton onOpen={() => setLaunching(true)} label="Launch" />
        </div>
      )}
    </article>
  );
}
