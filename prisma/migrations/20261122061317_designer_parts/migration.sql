-- CreateEnum
CREATE TYPE "DesignPartKind" AS ENUM ('actor', 'reward', 'environment');

-- AlterTable
ALTER TABLE "Dataset" ADD COLUMN     "columnTypes" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "description" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "evalFraction" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'upload',
ADD COLUMN     "location" JSONB,
ADD COLUMN     "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ALTER COLUMN "byteSize" SET DEFAULT 0,
ALTER COLUMN "rowCount" SET DEFAULT 0,
ALTER COLUMN "sha256" DROP NOT NULL,
ALTER COLUMN "content" DROP NOT NULL;

-- CreateTable
CREATE TABLE "DesignPart" (
    "id" TEXT NOT NULL,
    "kind" "DesignPartKind" NOT NULL,
    "name" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DesignPart_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "DesignPart_kind_updatedAt_idx" ON "DesignPart"("kind", "updatedAt");

-- CreateIndex
CREATE UNIQUE INDEX "DesignPart_kind_name_key" ON "DesignPart"("kind", "name");
