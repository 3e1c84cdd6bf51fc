-- CreateTable
CREATE TABLE "Runner" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "capabilities" JSONB,
    "probeError" TEXT,
    "gpus" JSONB NOT NULL DEFAULT '[]',
    "cpuCount" INTEGER NOT NULL,
    "memoryBytes" DOUBLE PRECISION NOT NULL,
    "concurrency" INTEGER NOT NULL,
    "heartbeatMs" INTEGER NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "lastHeartbeatAt" TIMESTAMP(3) NOT NULL,
    "stoppedAt" TIMESTAMP(3),

    CONSTRAINT "Runner_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Runner_lastHeartbeatAt_idx" ON "Runner"("lastHeartbeatAt");
