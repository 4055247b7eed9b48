//! The fixtures of the Skills extension scenarios (`SCENARIOS.md`, "Skills extension
//! scenarios"): three skills, one with supporting files in nested directories and one under
//! an organizational prefix, served two entries to a `skills/list` page so that the
//! listing is paginated, with `resources/directory/read` declared.

use mcp_server::ServerBuilder;
use mcp_server::skills::{Skill, Skills};

/// `skill://pdf-processing/SKILL.md`: the SEP's example skill. Its frontmatter has a
/// nested `metadata` mapping and a version that YAML must keep a string.
const PDF_SKILL_MD: &str = "---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: 2.1.0
  author: mcp-rs
---

# PDF processing

Fill the forms described in `references/FORMS.md`, run `scripts/extract.py` to pull the
fields out, and start from a template in `templates/`.
";

const GIT_SKILL_MD: &str = "---
name: git-workflow
description: Follow this team's Git conventions for branching and commits
---

# Git workflow

Branch from `main`, one commit per logical change.
";

const REFUNDS_SKILL_MD: &str = "---
name: refunds
description: Process customer refund requests per company policy
---

# Refunds

Answer with the template in `examples/email.md`.
";

/// The skills (built in memory: the binary needs no files beside it).
fn skills() -> Skills {
    let pdf = Skill::builder("pdf-processing")
        .file("SKILL.md", PDF_SKILL_MD)
        .file("references/FORMS.md", "# Forms\n\nW-9, 1099-NEC, SF-424.\n")
        .file(
            "scripts/extract.py",
            "import sys\n\nprint(f\"extracting {sys.argv[1]}\")\n",
        )
        .file("templates/invoice.md", "# Invoice\n\nNumber: {number}\n")
        .file(
            "templates/regional/eu-invoice.md",
            "# EU invoice\n\nVAT: {vat}\n",
        );
    let git = Skill::builder("git-workflow").file("SKILL.md", GIT_SKILL_MD);
    let refunds = Skill::builder("acme/billing/refunds")
        .file("SKILL.md", REFUNDS_SKILL_MD)
        .file(
            "examples/email.md",
            "Dear customer, your refund of {amount} is on its way.\n",
        );
    Skills::new()
        .skill(pdf.build())
        .skill(git.build())
        .skill(refunds.build())
        .directory_read(true)
        .page_size(2)
}

/// Adds the Skills extension and its skills to `builder`.
pub(crate) fn install(builder: ServerBuilder) -> ServerBuilder {
    builder.skills(skills())
}
