//! The guest's imports, all served by one [`Guest`]: the real ones in `wasi` and `state`, the
//! refused ones in `refused`.

use std::borrow::BorrowMut;

use super::bindings::r#root::r#component::RootImports;
use super::state::Guest;

impl RootImports<hyperlight_common::component::Negative> for Guest {
    type Environment = Self;
    fn environment(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Exit = Self;
    fn exit(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Error = Self;
    fn error(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Poll = Self;
    fn poll(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Streams = Self;
    fn streams(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Stdin = Self;
    fn stdin(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Stdout = Self;
    fn stdout(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Stderr = Self;
    fn stderr(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TerminalInput = Self;
    fn terminal_input(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TerminalOutput = Self;
    fn terminal_output(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TerminalStdin = Self;
    fn terminal_stdin(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TerminalStdout = Self;
    fn terminal_stdout(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TerminalStderr = Self;
    fn terminal_stderr(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type MonotonicClock = Self;
    fn monotonic_clock(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type WallClock = Self;
    fn wall_clock(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type WasiFilesystemTypesV020 = Self;
    fn wasi_filesystem_types_v0_2_0(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Preopens = Self;
    fn preopens(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Network = Self;
    fn network(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type InstanceNetwork = Self;
    fn instance_network(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Udp = Self;
    fn udp(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type UdpCreateSocket = Self;
    fn udp_create_socket(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Tcp = Self;
    fn tcp(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type TcpCreateSocket = Self;
    fn tcp_create_socket(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type IpNameLookup = Self;
    fn ip_name_lookup(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Random = Self;
    fn random(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Insecure = Self;
    fn insecure(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type InsecureSeed = Self;
    fn insecure_seed(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type WasiHttpTypesV020 = Self;
    fn wasi_http_types_v0_2_0(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type OutgoingHandler = Self;
    fn outgoing_handler(&mut self) -> impl BorrowMut<Self> {
        self
    }

    type Tools = Self;
    fn tools(&mut self) -> impl BorrowMut<Self> {
        self
    }
}
