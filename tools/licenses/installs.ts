/**
 * What the CI and service scripts install, read from their text: apt packages (apt_install),
 * Go modules (go_install_pinned), pip packages (pip install name==$VERSION), Maven artifacts
 * (the Cassandra pom, and downloads from $MAVEN_CENTRAL), with versions resolved from the
 * scripts' `VAR="${VAR:-default}"` settings.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ToolKind = 'apt' | 'go' | 'pip' | 'maven' | 'npm';
export interface Install {
  kind: ToolKind;
  name: string;
  version: string | undefined;
  where: string;
}

/** The scripts that install programs (the CI entry point and what it runs, with the parts services.sh sources). */
export const INSTALL_SCRIPTS = [
  '.ci/run',
  'scripts/services.sh',
  'scripts/services/common.sh',
  'scripts/services/cassandra.sh',
  'scripts/services/redis.sh',
  'scripts/services/nats.sh',
  'scripts/node-runtime.sh',
];
const CASSANDRA_POM = 'scripts/services/cassandra-deps.pom.xml';

function defaults(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const m of text.matchAll(/^(\w+)="\$\{\1:-([^}]*)\}"/gm)) vars.set(m[1]!, m[2]!);
  return vars;
}

export function findInstalls(root: string): Install[] {
  const found: Install[] = [];
  // Continuation lines joined, comments dropped: one command per line.
  const texts = INSTALL_SCRIPTS.map((file) => ({
    file,
    text: readFileSync(join(root, file), 'utf8')
      .replace(/\\\n\s*/g, ' ')
      .replace(/^\s*#.*$/gm, ''),
  }));
  // services.sh sets the versions its sourced parts install: one set of settings for all scripts.
  const vars = new Map(texts.flatMap(({ text }) => [...defaults(text)]));
  for (const { file, text } of texts) {
    const version = (name: string | undefined) => (name === undefined ? undefined : (vars.get(name) ?? `$${name}`));
    for (const m of text.matchAll(/\bapt_install((?:[ \t]+[a-z0-9][a-z0-9.+-]*)+)/g)) {
      for (const name of m[1]!.trim().split(/\s+/)) found.push({ kind: 'apt', name, version: undefined, where: file });
    }
    // A direct `apt-get install pkg...` (not in a message): the bare words up to a redirection or operator.
    for (const m of text.matchAll(/^(?![^\n]*\b(?:log|warn|die|echo|printf)\b)[^\n]*\bapt-get install\b([^\n>|&;]*)/gm)) {
      for (const name of m[1]!.split(/\s+/).filter((w) => /^[a-z0-9][a-z0-9.+-]*$/.test(w)))
        found.push({ kind: 'apt', name, version: undefined, where: file });
    }
    for (const m of text.matchAll(/\bgo_install_pinned\s+\S+\s+(\S+)\s+"\$\{?(\w+)\}?"/g))
      found.push({ kind: 'go', name: m[1]!, version: version(m[2]), where: file });
    // A program fetched as an npm package outside node_modules (`npm pack "name@$version"`).
    for (const m of text.matchAll(/\bnpm pack\b[^\n]*?"?([@a-z0-9][\w./-]*)@/g))
      found.push({ kind: 'npm', name: m[1]!, version: undefined, where: file });
    for (const m of text.matchAll(/\bgo install\s+"?([\w./-]+)@/g))
      found.push({ kind: 'go', name: m[1]!, version: undefined, where: file });
    for (const m of text.matchAll(/\bpip"?\s+install\b[^\n]*?"?([A-Za-z][\w.-]*)==\$\{?(\w+)\}?/g))
      found.push({ kind: 'pip', name: m[1]!, version: version(m[2]), where: file });
    for (const m of text.matchAll(/\$MAVEN_CENTRAL\/([\w./-]+)\/([\w-]+)\/\$\{?(\w+)\}?\//g)) {
      found.push({ kind: 'maven', name: `${m[1]!.replaceAll('/', '.')}:${m[2]}`, version: version(m[3]), where: file });
    }
    if (/\bmvn\b[^\n]*cassandra-deps\.pom\.xml/.test(text)) {
      const pom = readFileSync(join(root, CASSANDRA_POM), 'utf8');
      const cassandraVersion = /-Dcassandra\.version="\$\{?(\w+)\}?"/.exec(text)?.[1];
      for (const d of pom.matchAll(
        /<groupId>([^<]+)<\/groupId>\s*<artifactId>([^<]+)<\/artifactId>\s*<version>\$\{cassandra\.version\}<\/version>/g,
      )) {
        found.push({ kind: 'maven', name: `${d[1]}:${d[2]}`, version: version(cassandraVersion), where: `${file} (${CASSANDRA_POM})` });
      }
    }
  }
  return found;
}
