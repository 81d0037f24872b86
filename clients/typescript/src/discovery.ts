// Finding the running daemon (daemon-api.md §1): it writes OPENWORK_HOME/daemon.json (mode 0600)
// once it listens and removes it at a clean shutdown. Node only (it reads a file).
import { readFile } from "node:fs/promises";
import { join } from "node:path";

import { OpenWorkClient } from "./client.js";

export interface DaemonInfo {
  url: string;
  token: string;
  pid: number;
  version: string;
}

export class NoDaemon extends Error {}

export const DISCOVERY_FILE = "daemon.json";

export async function discover(home: string): Promise<DaemonInfo> {
  const path = join(home, DISCOVERY_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new NoDaemon(`no daemon is running for ${home} (${path} does not exist)`);
  }
  const info = JSON.parse(text) as Partial<DaemonInfo>;
  if (typeof info.url !== "string" || typeof info.token !== "string") {
    throw new NoDaemon(`${path} is not a daemon discovery file`);
  }
  return { url: info.url, token: info.token, pid: Number(info.pid), version: String(info.version) };
}

/** A client of the daemon that serves `home`. */
export async function connect(home: string): Promise<{ info: DaemonInfo; client: OpenWorkClient }> {
  const info = await discover(home);
  return { info, client: new OpenWorkClient(info.url, info.token) };
}
