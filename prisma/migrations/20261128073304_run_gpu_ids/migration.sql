-- The runner's own GPU indices a run holds (issue #25): shown on the run page; /runners shows the same
-- from the runners' heartbeats. Set when a runner claims the run; empty for a CPU run.
-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "gpuIds" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
