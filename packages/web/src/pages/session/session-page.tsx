import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type Artifact, artifactsQuery, artifactUrl } from "../../api/artifacts.ts";
import { commandLogQuery, type SessionCommand } from "../../api/command-log.ts";
import { type Execution, finalStatuses } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { ArtifactsPanel } from "../run/artifacts-panel.tsx";
import { RunLog } from "../run/run-log.tsx";
import { CommandTimeline } from "./command-timeline.tsx";
import { DeviceLog, isDeviceLog } from "./device-log.tsx";
import { SessionHeader } from "./session-header.tsx";
import { type SeekRequest, SessionVideo } from "./session-video.tsx";
import { videoParts } from "./video-parts.ts";

/**
 * The session's start on the device host: its step's start as the agent reported it, the clock the commands' times
 * are on (the server's own times may differ from the host's by the clocks' drift); else its first command.
 */
function startOnHost(session: Execution, commands: readonly SessionCommand[]): number {
  const step = session.devices[0]?.steps[0]?.started_at;
  const started = step ? Date.parse(step) : Number.NaN;
  return Number.isNaN(started) ? (commands[0]?.at ?? 0) : started;
}

function Commands({
  session,
  log,
  live,
  hasVideo,
  onSeek,
  selected,
}: {
  session: Execution;
  log: Artifact | undefined;
  live: boolean;
  hasVideo: boolean;
  onSeek: (command: SessionCommand, offsetMs: number) => void;
  selected: number | undefined;
}) {
  const commands = useQuery({
    ...commandLogQuery(log ? artifactUrl(session.id, log.name, log) : ""),
    enabled: !!log,
  });
  if (!log) {
    return (
      <p className="rounded-lg border border-dashed border-line p-4 text-sm text-muted">
        {live
          ? "The commands appear when the session ends: the agent uploads its command log then, with the video and the device log. Until then the agent's log below shows the session's progress."
          : "This session kept no command log."}
      </p>
    );
  }
  if (commands.error) return <ProblemMessage error={commands.error} />;
  if (!commands.data) return <p className="text-sm text-muted">Loading the commands…</p>;
  return (
    <>
      <CommandTimeline
        commands={commands.data.commands}
        startedAt={startOnHost(session, commands.data.commands)}
        onSeek={hasVideo ? onSeek : undefined}
        selected={selected}
      />
      {commands.data.unreadable > 0 && (
        <p className="text-xs text-muted">
          {commands.data.unreadable} {commands.data.unreadable === 1 ? "line" : "lines"} of the command log
          could not be read.
        </p>
      )}
    </>
  );
}

/**
 * An Appium session (API.md §12), at its run's address: its header, its commands as a timeline beside its video
 * and device log (side by side on a wide screen, one above the other on a narrow one), the agent's log while it
 * runs, and every file kept (Appium's log among them). Live until it ends, as a run's page is.
 */
export function SessionPage({ session }: { session: Execution }) {
  const live = !finalStatuses.has(session.status);
  const artifacts = useQuery(artifactsQuery(session.id, live));
  const [seek, setSeek] = useState<SeekRequest>();
  const [selected, setSelected] = useState<number>();
  const items = artifacts.data ?? [];
  const commandLog = items.find((artifact) => artifact.name === "commands.jsonl");
  const parts = videoParts(items);
  const deviceLog = items.find(isDeviceLog);
  const onSeek = (command: SessionCommand, offsetMs: number) => {
    setSelected(command.index);
    setSeek({ ms: offsetMs, nonce: (seek?.nonce ?? 0) + 1 });
  };
  return (
    <div className="space-y-8">
      <SessionHeader session={session} />
      <div className="grid gap-8 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <section aria-labelledby="session-commands" className="min-w-0 space-y-2">
          <h2 id="session-commands" className="text-lg font-semibold">
            Commands
          </h2>
          <Commands
            session={session}
            log={commandLog}
            live={live}
            hasVideo={parts.length > 0}
            onSeek={onSeek}
            selected={selected}
          />
        </section>
        <div className="min-w-0 space-y-8">
          <section aria-labelledby="session-video" className="space-y-2">
            <h2 id="session-video" className="text-lg font-semibold">
              Video
            </h2>
            {parts.length > 0 ? (
              <SessionVideo
                runId={session.id}
                parts={parts}
                seek={seek}
                afterInstall={session.package_name !== null}
              />
            ) : (
              <p className="text-sm text-muted">
                {live
                  ? "The video is uploaded when the session ends."
                  : "No video: the session was not recorded."}
              </p>
            )}
          </section>
          <section aria-labelledby="session-device-log" className="space-y-2">
            <h2 id="session-device-log" className="text-lg font-semibold">
              Device log
            </h2>
            {deviceLog ? (
              <DeviceLog runId={session.id} log={deviceLog} />
            ) : (
              <p className="text-sm text-muted">
                {live ? "The device log is uploaded when the session ends." : "No device log was kept."}
              </p>
            )}
          </section>
        </div>
      </div>
      <RunLog runId={session.id} live={live} title="Agent log" />
      <ArtifactsPanel runId={session.id} devices={session.devices} live={live} />
    </div>
  );
}
