import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";

// No Docker engine runs on the machines we test on, so the production compose file is checked
// statically: the services exist, are wired to each other, and the runner reserves GPUs.
const root = resolve(__dirname, "../..");
const compose = parse(readFileSync(resolve(root, "docker-compose.yml"), "utf8"));

describe("docker-compose.yml", () => {
  it("has postgres, redis, web and runner", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["postgres", "redis", "runner", "web"]);
  });

  it("points web and runner at the compose Postgres and Redis", () => {
    for (const name of ["web", "runner"]) {
      const env = compose.services[name].environment;
      expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(compose.services[name].depends_on.postgres.condition).toBe("service_healthy");
    }
  });

  it("reserves NVIDIA GPUs for the runner", () => {
    const devices = compose.services.runner.deploy.resources.reservations.devices;
    expect(devices[0]).toMatchObject({ driver: "nvidia", capabilities: ["gpu"] });
  });

  it("says who each image runs as: web unprivileged, the runner's trainers dropped to `troupe` (issue 30)", () => {
    const file = (name: string) => readFileSync(resolve(root, compose.services[name].build.dockerfile), "utf8");
    const lastUser = (text: string) => [...text.matchAll(/^USER\s+(\S+)/gm)].at(-1)?.[1];
    expect(lastUser(file("web"))).toBe("node");
    const runner = file("runner");
    expect(lastUser(runner)).toBe("root"); // only to drop each trainer: apps/runner/src/process/runAs.ts
    expect(runner).toMatch(/useradd [^\n]*troupe/);
    expect(runner).toMatch(/ENV [^\n]*TROUPE_RUN_USER=troupe/);
    expect(runner).toMatch(/ENV [^\n]*HF_HOME=\/var\/cache\/huggingface/); // readable by troupe, not under /root
  });

  it("builds from Dockerfiles that exist", () => {
    for (const name of ["web", "runner"]) {
      expect(existsSync(resolve(root, compose.services[name].build.dockerfile))).toBe(true);
    }
  });
});
