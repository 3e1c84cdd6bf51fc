-- CreateEnum
CREATE TYPE "RunControlRequest" AS ENUM ('pause', 'resume', 'stop_after_step');

-- AlterTable
ALTER TABLE "Run" ADD COLUMN     "controlRequest" "RunControlRequest",
ADD COLUMN     "controlRequestedAt" TIMESTAMP(3);
