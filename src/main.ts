#!/usr/bin/env bun
// corpadmin: the command line. `corpadmin [serve]`, `migrate`, `version`, `help`.
import { ConfigError, loadConfig, parseFlags, settingsHelp } from "./config";
import { migrate } from "./cli/migrate";
import { serve } from "./cli/serve";
import { VERSION } from "./version";

const USAGE = `corpadmin ${VERSION} — administration and registry service for ISPs

Usage: corpadmin [command] [--flag value ...]

Commands:
  serve      run the HTTP API, webhook dispatcher and metric scheduler (default)
  migrate    apply pending database migrations and exit
  version    print the version
  help       print this text

Settings (a flag wins over its environment variable):
${settingsHelp()}
`;

async function main(argv: string[]): Promise<number | null> {
  const { flags, words } = parseFlags(argv);
  const command = words[0] ?? "serve";
  if (command === "help" || flags.has("help")) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command === "version" || flags.has("version")) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const config = loadConfig(flags);
  switch (command) {
    case "serve":
      await serve(config);
      return null; // keeps running until a signal
    case "migrate":
      return migrate(config);
    default:
      process.stderr.write(`unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`corpadmin: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`corpadmin: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
