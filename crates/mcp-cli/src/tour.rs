//! `mcp` with no arguments: the bundled example server, run as a child process, walked
//! through discover → tools → a tool call → a resource read → a prompt, each step printed
//! with the request it made, so a newcomer sees MCP work in one command.

use serde_json::{Map, Value, json};

use crate::target::Target;
use crate::{Error, connect, describe, output, tool_table};

fn step(number: usize, title: &str, request: &str) {
    println!("\n{number}. {title}\n   → {request}\n");
}

fn indent(text: &str) -> String {
    text.lines().fold(String::new(), |mut out, line| {
        out.push_str("   ");
        out.push_str(line);
        out.push('\n');
        out
    })
}

/// Runs the tour.
pub(crate) async fn run() -> Result<(), Error> {
    println!(
        "A tour of MCP with the bundled example server (`mcp serve-example`, over stdio).\n\
         Every step below is one request; `mcp --help` lists the commands that make them."
    );
    let session = connect(
        &Target::Example,
        Some(mcp_legacy::client::EraChoice::Modern),
        None,
    )
    .await?;
    let client = &session.client;
    let outcome = async {
        step(
            1,
            "Discover: who is the server?",
            "server/discover    (mcp discover)",
        );
        let found = serde_json::to_value(client.discover().await?)?;
        print!("{}", indent(&describe(&found, &session.verdict.version)));

        step(
            2,
            "Tools: what can the model call?",
            "tools/list    (mcp tools)",
        );
        let tools = client.list_tools_all().await?;
        let table = tool_table(&tools, output::width() - 3);
        print!("{}", indent(&table));

        step(
            3,
            "Call a tool",
            r#"tools/call add {"a": 2, "b": 3}    (mcp call add a=2 b=3)"#,
        );
        let mut args = Map::new();
        args.insert("a".to_owned(), json!(2));
        args.insert("b".to_owned(), json!(3));
        let sum = serde_json::to_value(client.call_tool("add", args).await?)?;
        print!("{}", indent(&output::content(&sum["content"])));

        step(
            4,
            "Read a resource",
            "resources/read example://squares/12    (mcp read example://squares/12)",
        );
        let read = serde_json::to_value(client.read_resource("example://squares/12").await?)?;
        for contents in read["contents"].as_array().into_iter().flatten() {
            print!("{}", indent(&output::resource(contents)));
        }

        step(
            5,
            "Get a prompt",
            "prompts/get explain topic=tools    (mcp prompt explain topic=tools)",
        );
        let mut arguments = mcp_types::OrderedMap::new();
        arguments.insert("topic", "tools".to_owned());
        let prompt = serde_json::to_value(client.get_prompt("explain", arguments).await?)?;
        for message in prompt["messages"].as_array().into_iter().flatten() {
            let text = output::content(&Value::Array(vec![message["content"].clone()]));
            print!(
                "{}",
                indent(&format!(
                    "{}: {text}",
                    message["role"].as_str().unwrap_or("?")
                ))
            );
        }

        println!(
            "\nNext: `mcp call greet` asks your name (elicitation), `mcp call countdown \
             seconds=3` shows progress,\n`mcp tools -- COMMAND…` or `mcp tools --server URL` \
             talks to any other server, `--json` prints the protocol's JSON."
        );
        Ok::<(), Error>(())
    }
    .await;
    session.close().await;
    outcome
}
