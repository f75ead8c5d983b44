// An S3-compatible endpoint for trying the scaled configuration on one machine (scripts/cluster.sh): the
// test suite's s3rver wrapper on a fixed port, until Ctrl-C. Not for production: objects live in a temp dir.
import { startS3Server } from "../packages/server/test/s3-server.ts";

const port = Number(process.env.S3_PORT ?? 4569);
const s3 = await startS3Server({ bucket: "testbay", port });
console.log(
  `s3rver: ${s3.endpoint} bucket ${s3.bucket} (AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER)`,
);
const stop = () => s3.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
