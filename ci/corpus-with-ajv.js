// The fixture corpus judged by ajv, the JSON Schema validator inside Prism,
// loaded with schemas/openapi.yaml the way Prism configures it (draft
// 2020-12, ajv-formats, allErrors, strict off): every valid fixture is
// accepted and every invalid one rejected, as package schemas does
// (schemas/openapi's Go test shows the same with the Go validator). So a
// format rule (uri) or a number edge case reads the same in the JavaScript
// tools as in ours. ci/openapi-tools.sh runs it:
//
//   node ci/corpus-with-ajv.js
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;
const yaml = require("js-yaml");

const root = path.join(__dirname, "..");
const doc = yaml.load(fs.readFileSync(path.join(root, "schemas/openapi.yaml"), "utf8"));
const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: false });
addFormats(ajv);
const base = "https://tcmkit.invalid/openapi.json";
ajv.addSchema({ components: doc.components }, base);

// A corpus kind is a component's name (FeedPage) or an event type
// (title_changed), whose component the discriminator names.
const mapping = doc.components.schemas.Event.discriminator.mapping;
const validator = (kind) => ajv.getSchema(base + (mapping[kind] ?? "#/components/schemas/" + kind));

const corpus = path.join(root, "fixtures/corpus");
const problems = [];
const seen = { valid: 0, invalid: 0 };
for (const set of ["valid", "invalid"]) {
  for (const kind of fs.readdirSync(path.join(corpus, set)).sort()) {
    const validate = validator(kind);
    if (validate === undefined) {
      problems.push(`${set}/${kind}: no component for this kind`);
      continue;
    }
    for (const file of fs.readdirSync(path.join(corpus, set, kind)).sort()) {
      const fixture = JSON.parse(fs.readFileSync(path.join(corpus, set, kind, file), "utf8"));
      const accepted = validate(set === "valid" ? fixture : fixture.payload);
      seen[set]++;
      if (accepted !== (set === "valid")) {
        const why = accepted ? `accepted although it breaks ${fixture.rule}` : `rejected: ${ajv.errorsText(validate.errors)}`;
        problems.push(`${set}/${kind}/${file}: ${why}`);
      }
    }
  }
}
for (const p of problems) console.log(`FAIL: ${p}`);
const version = require("ajv/package.json").version;
if (problems.length > 0 || seen.valid === 0 || seen.invalid === 0) {
  console.log(`ajv ${version}: ${problems.length} fixture(s) judged otherwise than package schemas`);
  process.exit(1);
}
console.log(`ajv ${version} with the document: all ${seen.valid} valid fixtures accepted, all ${seen.invalid} invalid ones rejected`);
