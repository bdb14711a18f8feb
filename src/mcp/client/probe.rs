//! Probing every server at once, for `discover`, `instructions` and `install`: each server not
//! started yet is started and asked for its tools in parallel, each with its own short timeout,
//! and what answered stays open for the rest of the command.

use std::collections::HashMap;
use std::time::Instant;

use super::connection::{STARTUP_TIMEOUT, list_tools, open, shut};
use super::errors::{causes, failed, timed_out};
use super::servers::{Mcp, State};
use crate::mcp::listed::ListedTool;
use crate::mcp::stdio::SharedNotes;
use crate::tools::ErrorKind;

/// A server that answered, with its tools.
pub(crate) type Listed = (String, Vec<ListedTool>);

impl Mcp {
    /// Every server with its tools, and every server that could not be reached or configured,
    /// with why; each server is started at once, with its own timeout within `deadline`.
    pub(crate) fn catalog(&mut self, deadline: Instant) -> (Vec<Listed>, Vec<(String, String)>) {
        let mut left_out: Vec<(String, String)> = Vec::new();
        let pending: Vec<_> = self
            .servers
            .iter()
            .filter(|slot| matches!(slot.state, State::Idle))
            .map(|slot| slot.server.clone())
            .collect();
        let (workspace, network, max_message) = (self.workspace.clone(), self.network.clone(), self.max_message);
        let probed = match self.runtime() {
            Ok(runtime) => runtime.block_on(async {
                let mut probes = tokio::task::JoinSet::new();
                for config in pending {
                    let (workspace, network) = (workspace.clone(), network.clone());
                    let within = STARTUP_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
                    probes.spawn(async move {
                        let notes = SharedNotes::default();
                        let probe = async {
                            let connection = open(&config, &workspace, &network, max_message, notes.clone()).await?;
                            let tools = list_tools(&connection.service).await;
                            let tools = match tools {
                                Ok(tools) => tools,
                                Err(err) => {
                                    let why = format!("could not list tools: {}", causes(&err));
                                    shut(connection).await;
                                    return Err(why);
                                }
                            };
                            Ok((connection, tools))
                        };
                        let outcome = match tokio::time::timeout(within, probe).await {
                            Ok(Ok(done)) => Ok(done),
                            Ok(Err(why)) => Err(failed(&config, &why, &notes, ErrorKind::Runtime)),
                            Err(_) => Err(timed_out(&config, "initialize", within, &notes)),
                        };
                        (config.name.clone(), outcome)
                    });
                }
                let mut done = Vec::new();
                while let Some(joined) = probes.join_next().await {
                    done.extend(joined.ok());
                }
                done
            }),
            Err(err) => {
                left_out.extend(self.servers.iter().map(|slot| (slot.server.name.clone(), err.message.clone())));
                return (Vec::new(), left_out);
            }
        };
        let mut listed_now: HashMap<String, Vec<ListedTool>> = HashMap::new();
        for (name, outcome) in probed {
            let state = match outcome {
                Ok((connection, tools)) => {
                    listed_now.insert(name.clone(), tools);
                    State::Open(Box::new(connection))
                }
                Err(error) => State::Failed(error),
            };
            if let Some(slot) = self.slot_mut(&name) {
                slot.state = state;
            }
        }
        let mut listed = Vec::new();
        let names: Vec<String> = self.servers.iter().map(|slot| slot.server.name.clone()).collect();
        for name in names {
            let result = match listed_now.remove(&name) {
                Some(tools) => self.keep_listing(&name, tools),
                None => self.listing(&name, deadline, false),
            };
            match result {
                Ok(listing) => listed.push((name, listing.tools())),
                Err(err) => left_out.push((name, err.message)),
            }
        }
        (listed, left_out)
    }
}
