-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "RunSource" AS ENUM ('ui', 'api', 'seed');

-- CreateTable
CREATE TABLE "Experiment" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "spec" JSONB NOT NULL,
    "isDemo" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Experiment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Run" (
    "id" TEXT NOT NULL,
    "experimentId" TEXT,
    "name" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "specVersion" INTEGER NOT NULL,
    "seed" INTEGER NOT NULL,
    "status" "RunStatus" NOT NULL DEFAULT 'queued',
    "source" "RunSource" NOT NULL DEFAULT 'ui',
    "priority" INTEGER NOT NULL DEFAULT 0,
    "gpus" INTEGER NOT NULL DEFAULT 0,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "error" TEXT,
    "logTail" TEXT,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "lastStep" INTEGER,
    "runnerId" TEXT,
    "pid" INTEGER,
    "workDir" TEXT,
    "cancelRequestedAt" TIMESTAMP(3),
    "heartbeatAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RunEvent" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "ts" TIMESTAMP(3) NOT NULL,
    "payload" JSONB NOT NULL,

    CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("runId","seq")
);

-- CreateTable
CREATE TABLE "MetricPoint" (
    "runId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "actor" TEXT NOT NULL DEFAULT '',
    "step" INTEGER NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "ts" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MetricPoint_pkey" PRIMARY KEY ("runId","name","actor","step")
);

-- CreateTable
CREATE TABLE "MemorySample" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "step" INTEGER NOT NULL,
    "phase" TEXT NOT NULL,
    "device" TEXT NOT NULL,
    "actor" TEXT NOT NULL DEFAULT '',
    "rssBytes" BIGINT,
    "allocatedBytes" BIGINT,
    "reservedBytes" BIGINT,
    "peakBytes" BIGINT,
    "ts" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MemorySample_pkey" PRIMARY KEY ("runId","seq")
);

-- CreateTable
CREATE TABLE "Episode" (
    "runId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "step" INTEGER NOT NULL,
    "environment" TEXT NOT NULL,
    "groupIndex" INTEGER NOT NULL,
    "sampleIndex" INTEGER NOT NULL,
    "datasetRow" INTEGER,
    "messages" JSONB NOT NULL,
    "reward" DOUBLE PRECISION NOT NULL,
    "rewardComponents" JSONB NOT NULL,
    "advantage" DOUBLE PRECISION,
    "ts" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Episode_pkey" PRIMARY KEY ("runId","seq")
);

-- CreateTable
CREATE TABLE "LogLine" (
    "runId" TEXT NOT NULL,
    "lineNo" INTEGER NOT NULL,
    "stream" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "ts" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LogLine_pkey" PRIMARY KEY ("runId","lineNo")
);

-- CreateIndex
CREATE INDEX "Experiment_updatedAt_idx" ON "Experiment"("updatedAt");

-- CreateIndex
CREATE INDEX "Run_status_createdAt_idx" ON "Run"("status", "createdAt");

-- CreateIndex
CREATE INDEX "Run_experimentId_createdAt_idx" ON "Run"("experimentId", "createdAt");

-- CreateIndex
CREATE INDEX "Run_createdAt_idx" ON "Run"("createdAt");

-- CreateIndex
CREATE INDEX "MemorySample_runId_step_idx" ON "MemorySample"("runId", "step");

-- CreateIndex
CREATE INDEX "Episode_runId_step_groupIndex_idx" ON "Episode"("runId", "step", "groupIndex");

-- CreateIndex
CREATE INDEX "Episode_runId_datasetRow_step_idx" ON "Episode"("runId", "datasetRow", "step");

-- AddForeignKey
ALTER TABLE "Run" ADD CONSTRAINT "Run_experimentId_fkey" FOREIGN KEY ("experimentId") REFERENCES "Experiment"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MetricPoint" ADD CONSTRAINT "MetricPoint_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemorySample" ADD CONSTRAINT "MemorySample_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Episode" ADD CONSTRAINT "Episode_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LogLine" ADD CONSTRAINT "LogLine_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
