//! `wasi:sockets`: every socket operation and every name lookup is denied (`AccessDenied`, a
//! `PermissionError` in Python). The sockets and lookups can never be created, yet answer every
//! method the interface names.

use hyperlight_common::component::Negative;
use hyperlight_common::resource::BorrowedResourceGuard;

use super::super::bindings::r#wasi::r#clocks::r#monotonic_clock::Duration;
use super::super::bindings::r#wasi::r#sockets::r#network::{
    self as network, ErrorCode as SocketError, IpAddress, IpAddressFamily, IpSocketAddress,
};
use super::super::bindings::r#wasi::r#sockets::r#udp::{IncomingDatagram, OutgoingDatagram};
use super::super::bindings::r#wasi::r#sockets::{self as sockets, r#ip_name_lookup, r#tcp, r#udp};
use super::super::resources;
use super::super::state::Guest;

/// A resource handle the guest passes in, borrowed for the call.
type Borrowed<'a, T> = BorrowedResourceGuard<'a, T>;

/// The refusal of every socket operation.
fn denied<T>() -> Result<T, SocketError> {
    Err(SocketError::AccessDenied)
}

/// The guest's handle on the network it may use; nothing can be reached through it.
pub(crate) struct Network;
/// A TCP socket; never created.
pub(crate) struct TcpSocket;
/// A UDP socket; never created.
pub(crate) struct UdpSocket;
/// A UDP socket's incoming datagrams; never created.
pub(crate) struct IncomingDatagramStream;
/// A UDP socket's outgoing datagrams; never created.
pub(crate) struct OutgoingDatagramStream;
/// The addresses a name resolves to; never created.
pub(crate) struct ResolveAddressStream;

impl network::Network<Negative> for Guest {
    type T = Network;
}

impl sockets::Network<Negative> for Guest {}

impl sockets::InstanceNetwork<Negative, Network> for Guest {
    fn instance_network(&mut self) -> Network {
        Network
    }
}

impl
    tcp::TcpSocket<
        Negative,
        Duration,
        SocketError,
        resources::InputStream,
        IpAddressFamily,
        IpSocketAddress,
        Network,
        resources::OutputStream,
        resources::Pollable,
    > for Guest
{
    type T = TcpSocket;

    fn start_bind(
        &mut self,
        _: Borrowed<'_, TcpSocket>,
        _: Borrowed<'_, Network>,
        _: IpSocketAddress,
    ) -> Result<(), SocketError> {
        denied()
    }
    fn finish_bind(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<(), SocketError> {
        denied()
    }
    fn start_connect(
        &mut self,
        _: Borrowed<'_, TcpSocket>,
        _: Borrowed<'_, Network>,
        _: IpSocketAddress,
    ) -> Result<(), SocketError> {
        denied()
    }
    fn finish_connect(
        &mut self,
        _: Borrowed<'_, TcpSocket>,
    ) -> Result<(resources::InputStream, resources::OutputStream), SocketError> {
        denied()
    }
    fn start_listen(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<(), SocketError> {
        denied()
    }
    fn finish_listen(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<(), SocketError> {
        denied()
    }
    fn accept(
        &mut self,
        _: Borrowed<'_, TcpSocket>,
    ) -> Result<(TcpSocket, resources::InputStream, resources::OutputStream), SocketError> {
        denied()
    }
    fn local_address(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<IpSocketAddress, SocketError> {
        denied()
    }
    fn remote_address(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<IpSocketAddress, SocketError> {
        denied()
    }
    fn is_listening(&mut self, _: Borrowed<'_, TcpSocket>) -> bool {
        false
    }
    fn address_family(&mut self, _: Borrowed<'_, TcpSocket>) -> IpAddressFamily {
        IpAddressFamily::Ipv4
    }
    fn set_listen_backlog_size(&mut self, _: Borrowed<'_, TcpSocket>, _: u64) -> Result<(), SocketError> {
        denied()
    }
    fn keep_alive_enabled(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<bool, SocketError> {
        denied()
    }
    fn set_keep_alive_enabled(&mut self, _: Borrowed<'_, TcpSocket>, _: bool) -> Result<(), SocketError> {
        denied()
    }
    fn keep_alive_idle_time(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<Duration, SocketError> {
        denied()
    }
    fn set_keep_alive_idle_time(&mut self, _: Borrowed<'_, TcpSocket>, _: Duration) -> Result<(), SocketError> {
        denied()
    }
    fn keep_alive_interval(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<Duration, SocketError> {
        denied()
    }
    fn set_keep_alive_interval(&mut self, _: Borrowed<'_, TcpSocket>, _: Duration) -> Result<(), SocketError> {
        denied()
    }
    fn keep_alive_count(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<u32, SocketError> {
        denied()
    }
    fn set_keep_alive_count(&mut self, _: Borrowed<'_, TcpSocket>, _: u32) -> Result<(), SocketError> {
        denied()
    }
    fn hop_limit(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<u8, SocketError> {
        denied()
    }
    fn set_hop_limit(&mut self, _: Borrowed<'_, TcpSocket>, _: u8) -> Result<(), SocketError> {
        denied()
    }
    fn receive_buffer_size(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<u64, SocketError> {
        denied()
    }
    fn set_receive_buffer_size(&mut self, _: Borrowed<'_, TcpSocket>, _: u64) -> Result<(), SocketError> {
        denied()
    }
    fn send_buffer_size(&mut self, _: Borrowed<'_, TcpSocket>) -> Result<u64, SocketError> {
        denied()
    }
    fn set_send_buffer_size(&mut self, _: Borrowed<'_, TcpSocket>, _: u64) -> Result<(), SocketError> {
        denied()
    }
    fn subscribe(&mut self, _: Borrowed<'_, TcpSocket>) -> resources::Pollable {
        resources::Pollable::ready()
    }
    fn shutdown(&mut self, _: Borrowed<'_, TcpSocket>, _: tcp::ShutdownType) -> Result<(), SocketError> {
        denied()
    }
}

impl
    sockets::Tcp<
        Negative,
        Duration,
        SocketError,
        resources::InputStream,
        IpAddressFamily,
        IpSocketAddress,
        Network,
        resources::OutputStream,
        resources::Pollable,
    > for Guest
{
}

impl sockets::TcpCreateSocket<Negative, SocketError, IpAddressFamily, TcpSocket> for Guest {
    fn create_tcp_socket(&mut self, _: IpAddressFamily) -> Result<TcpSocket, SocketError> {
        denied()
    }
}

impl udp::IncomingDatagramStream<Negative, SocketError, IpSocketAddress, resources::Pollable> for Guest {
    type T = IncomingDatagramStream;

    fn receive(
        &mut self,
        _: Borrowed<'_, IncomingDatagramStream>,
        _: u64,
    ) -> Result<Vec<IncomingDatagram<IpSocketAddress>>, SocketError> {
        denied()
    }
    fn subscribe(&mut self, _: Borrowed<'_, IncomingDatagramStream>) -> resources::Pollable {
        resources::Pollable::ready()
    }
}

impl udp::OutgoingDatagramStream<Negative, SocketError, IpSocketAddress, resources::Pollable> for Guest {
    type T = OutgoingDatagramStream;

    fn check_send(&mut self, _: Borrowed<'_, OutgoingDatagramStream>) -> Result<u64, SocketError> {
        denied()
    }
    fn send(
        &mut self,
        _: Borrowed<'_, OutgoingDatagramStream>,
        _: Vec<OutgoingDatagram<IpSocketAddress>>,
    ) -> Result<u64, SocketError> {
        denied()
    }
    fn subscribe(&mut self, _: Borrowed<'_, OutgoingDatagramStream>) -> resources::Pollable {
        resources::Pollable::ready()
    }
}

impl
    udp::UdpSocket<
        Negative,
        SocketError,
        IncomingDatagramStream,
        IpAddressFamily,
        IpSocketAddress,
        Network,
        OutgoingDatagramStream,
        resources::Pollable,
    > for Guest
{
    type T = UdpSocket;

    fn start_bind(
        &mut self,
        _: Borrowed<'_, UdpSocket>,
        _: Borrowed<'_, Network>,
        _: IpSocketAddress,
    ) -> Result<(), SocketError> {
        denied()
    }
    fn finish_bind(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<(), SocketError> {
        denied()
    }
    fn stream(
        &mut self,
        _: Borrowed<'_, UdpSocket>,
        _: Option<IpSocketAddress>,
    ) -> Result<(IncomingDatagramStream, OutgoingDatagramStream), SocketError> {
        denied()
    }
    fn local_address(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<IpSocketAddress, SocketError> {
        denied()
    }
    fn remote_address(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<IpSocketAddress, SocketError> {
        denied()
    }
    fn address_family(&mut self, _: Borrowed<'_, UdpSocket>) -> IpAddressFamily {
        IpAddressFamily::Ipv4
    }
    fn unicast_hop_limit(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<u8, SocketError> {
        denied()
    }
    fn set_unicast_hop_limit(&mut self, _: Borrowed<'_, UdpSocket>, _: u8) -> Result<(), SocketError> {
        denied()
    }
    fn receive_buffer_size(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<u64, SocketError> {
        denied()
    }
    fn set_receive_buffer_size(&mut self, _: Borrowed<'_, UdpSocket>, _: u64) -> Result<(), SocketError> {
        denied()
    }
    fn send_buffer_size(&mut self, _: Borrowed<'_, UdpSocket>) -> Result<u64, SocketError> {
        denied()
    }
    fn set_send_buffer_size(&mut self, _: Borrowed<'_, UdpSocket>, _: u64) -> Result<(), SocketError> {
        denied()
    }
    fn subscribe(&mut self, _: Borrowed<'_, UdpSocket>) -> resources::Pollable {
        resources::Pollable::ready()
    }
}

impl sockets::Udp<Negative, SocketError, IpAddressFamily, IpSocketAddress, Network, resources::Pollable> for Guest {}

impl sockets::UdpCreateSocket<Negative, SocketError, IpAddressFamily, UdpSocket> for Guest {
    fn create_udp_socket(&mut self, _: IpAddressFamily) -> Result<UdpSocket, SocketError> {
        denied()
    }
}

impl ip_name_lookup::ResolveAddressStream<Negative, SocketError, IpAddress, resources::Pollable> for Guest {
    type T = ResolveAddressStream;

    fn resolve_next_address(
        &mut self,
        _: Borrowed<'_, ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        denied()
    }
    fn subscribe(&mut self, _: Borrowed<'_, ResolveAddressStream>) -> resources::Pollable {
        resources::Pollable::ready()
    }
}

impl sockets::IpNameLookup<Negative, SocketError, IpAddress, Network, resources::Pollable> for Guest {
    fn resolve_addresses(&mut self, _: Borrowed<'_, Network>, _: String) -> Result<ResolveAddressStream, SocketError> {
        denied()
    }
}
