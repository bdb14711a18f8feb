//! `wasi:http`: `outgoing-handler` refuses every request (`HTTP-request-denied`); a program's
//! HTTP goes through codeact's `web_fetch` tool, which applies the network policy. `fields`
//! works as a plain header map and outgoing requests, responses and options keep what is set,
//! so a client gets as far as sending before it is refused.

use std::sync::{Mutex, PoisonError};

use hyperlight_common::component::Negative;
use hyperlight_common::resource::BorrowedResourceGuard;

use super::super::bindings::r#wasi::r#clocks::r#monotonic_clock::Duration;
use super::super::bindings::r#wasi::r#http::r#types::{
    self as http, ErrorCode as HttpError, FieldKey, FieldValue, HeaderError, Method, Scheme, StatusCode,
};
use super::super::bindings::r#wasi::r#http::{OutgoingHandler, Types};
use super::super::resources;
use super::super::state::Guest;
use crate::sandbox::live::lock;

/// A resource handle the guest passes in, borrowed for the call.
type Borrowed<'a, T> = BorrowedResourceGuard<'a, T>;
/// A header list: names as given (compared case-insensitively), values as bytes.
type Entries = Vec<(FieldKey, FieldValue)>;

/// A header map: `wasi:http`'s `fields`, also its `headers` and `trailers`.
pub(crate) struct Fields {
    entries: Mutex<Entries>,
    /// Set on a message's headers: `set`, `delete` and `append` fail with `immutable`.
    immutable: bool,
}
/// A request the guest builds; `outgoing-handler.handle` refuses it.
pub(crate) struct OutgoingRequest(Mutex<OutgoingParts>);
/// A request's body; nothing can be written to it.
pub(crate) struct OutgoingBody;
/// A response the guest builds for an incoming request; there is none to answer.
pub(crate) struct OutgoingResponse(Mutex<Response>);
/// A request's timeouts, kept but never applied.
pub(crate) struct RequestOptions(Mutex<Timeouts>);
/// The slot for the response to an incoming request; never created.
pub(crate) struct ResponseOutparam;
/// An incoming request; never created.
pub(crate) struct IncomingRequest;
/// A response to a request; never created.
pub(crate) struct IncomingResponse;
/// An incoming message's body; never created.
pub(crate) struct IncomingBody;
/// The trailers of an incoming body; never created.
pub(crate) struct FutureTrailers;
/// The response a request would get; never created.
pub(crate) struct FutureIncomingResponse;

/// What an [`OutgoingRequest`] holds.
struct OutgoingParts {
    method: Method,
    path_with_query: Option<String>,
    scheme: Option<Scheme>,
    authority: Option<String>,
    headers: Entries,
    body_taken: bool,
}

/// What an [`OutgoingResponse`] holds.
struct Response {
    status: StatusCode,
    headers: Entries,
    body_taken: bool,
}

/// What a [`RequestOptions`] holds.
#[derive(Default)]
struct Timeouts {
    connect: Option<Duration>,
    first_byte: Option<Duration>,
    between_bytes: Option<Duration>,
}

impl Fields {
    /// A map holding `entries`.
    fn with(entries: Entries, immutable: bool) -> Self {
        Self { entries: Mutex::new(entries), immutable }
    }

    /// The entries, taken out of the map.
    fn into_entries(self) -> Entries {
        self.entries.into_inner().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `edit` to the entries, once `name` is checked and the map is mutable.
    fn change(&self, name: &str, edit: impl FnOnce(&mut Entries)) -> Result<(), HeaderError> {
        if self.immutable {
            return Err(HeaderError::Immutable);
        }
        check_name(name)?;
        edit(&mut lock(&self.entries));
        Ok(())
    }
}

/// A field name is a non-empty HTTP token.
fn check_name(name: &str) -> Result<(), HeaderError> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if !name.is_empty() && name.bytes().all(token) { Ok(()) } else { Err(HeaderError::InvalidSyntax) }
}

/// A field value holds no line break or NUL.
fn check_value(value: &[u8]) -> Result<(), HeaderError> {
    if value.iter().any(|b| matches!(b, b'\r' | b'\n' | 0)) { Err(HeaderError::InvalidSyntax) } else { Ok(()) }
}

/// A copy of `method` (the generated enum is not `Clone`).
fn copy_method(method: &Method) -> Method {
    match method {
        Method::Get => Method::Get,
        Method::Head => Method::Head,
        Method::Post => Method::Post,
        Method::Put => Method::Put,
        Method::Delete => Method::Delete,
        Method::Connect => Method::Connect,
        Method::Options => Method::Options,
        Method::Trace => Method::Trace,
        Method::Patch => Method::Patch,
        Method::Other(other) => Method::Other(other.clone()),
    }
}

/// A copy of `scheme` (the generated enum is not `Clone`).
fn copy_scheme(scheme: &Scheme) -> Scheme {
    match scheme {
        Scheme::HTTP => Scheme::HTTP,
        Scheme::HTTPS => Scheme::HTTPS,
        Scheme::Other(other) => Scheme::Other(other.clone()),
    }
}

impl http::Fields<Negative> for Guest {
    type T = Fields;

    fn new(&mut self) -> Fields {
        Fields::with(Vec::new(), false)
    }
    fn from_list(&mut self, entries: Entries) -> Result<Fields, HeaderError> {
        for (name, value) in &entries {
            check_name(name)?;
            check_value(value)?;
        }
        Ok(Fields::with(entries, false))
    }
    fn get(&mut self, fields: Borrowed<'_, Fields>, name: FieldKey) -> Vec<FieldValue> {
        let entries = lock(&fields.entries);
        entries.iter().filter(|(key, _)| key.eq_ignore_ascii_case(&name)).map(|(_, value)| value.clone()).collect()
    }
    fn has(&mut self, fields: Borrowed<'_, Fields>, name: FieldKey) -> bool {
        lock(&fields.entries).iter().any(|(key, _)| key.eq_ignore_ascii_case(&name))
    }
    fn set(
        &mut self,
        fields: Borrowed<'_, Fields>,
        name: FieldKey,
        values: Vec<FieldValue>,
    ) -> Result<(), HeaderError> {
        values.iter().try_for_each(|value| check_value(value))?;
        fields.change(&name, |entries| {
            entries.retain(|(key, _)| !key.eq_ignore_ascii_case(&name));
            entries.extend(values.into_iter().map(|value| (name.clone(), value)));
        })
    }
    fn delete(&mut self, fields: Borrowed<'_, Fields>, name: FieldKey) -> Result<(), HeaderError> {
        fields.change(&name, |entries| entries.retain(|(key, _)| !key.eq_ignore_ascii_case(&name)))
    }
    fn append(&mut self, fields: Borrowed<'_, Fields>, name: FieldKey, value: FieldValue) -> Result<(), HeaderError> {
        check_value(&value)?;
        fields.change(&name, |entries| entries.push((name.clone(), value)))
    }
    fn entries(&mut self, fields: Borrowed<'_, Fields>) -> Entries {
        lock(&fields.entries).clone()
    }
    fn clone(&mut self, fields: Borrowed<'_, Fields>) -> Fields {
        Fields::with(lock(&fields.entries).clone(), false)
    }
}

impl http::FutureIncomingResponse<Negative, IncomingResponse, resources::Pollable> for Guest {
    type T = FutureIncomingResponse;

    fn subscribe(&mut self, _: Borrowed<'_, FutureIncomingResponse>) -> resources::Pollable {
        resources::Pollable::ready()
    }
    fn get(
        &mut self,
        _: Borrowed<'_, FutureIncomingResponse>,
    ) -> Option<Result<Result<IncomingResponse, HttpError>, ()>> {
        Some(Ok(Err(HttpError::HTTPRequestDenied)))
    }
}

impl http::FutureTrailers<Negative, Fields, resources::Pollable> for Guest {
    type T = FutureTrailers;

    fn subscribe(&mut self, _: Borrowed<'_, FutureTrailers>) -> resources::Pollable {
        resources::Pollable::ready()
    }
    fn get(&mut self, _: Borrowed<'_, FutureTrailers>) -> Option<Result<Result<Option<Fields>, HttpError>, ()>> {
        Some(Ok(Err(HttpError::HTTPRequestDenied)))
    }
}

impl http::IncomingBody<Negative, FutureTrailers, resources::InputStream> for Guest {
    type T = IncomingBody;

    fn stream(&mut self, _: Borrowed<'_, IncomingBody>) -> Result<resources::InputStream, ()> {
        Err(())
    }
    fn finish(&mut self, _: IncomingBody) -> FutureTrailers {
        FutureTrailers
    }
}

impl http::IncomingRequest<Negative, Fields, IncomingBody> for Guest {
    type T = IncomingRequest;

    fn method(&mut self, _: Borrowed<'_, IncomingRequest>) -> Method {
        Method::Get
    }
    fn path_with_query(&mut self, _: Borrowed<'_, IncomingRequest>) -> Option<String> {
        None
    }
    fn scheme(&mut self, _: Borrowed<'_, IncomingRequest>) -> Option<Scheme> {
        None
    }
    fn authority(&mut self, _: Borrowed<'_, IncomingRequest>) -> Option<String> {
        None
    }
    fn headers(&mut self, _: Borrowed<'_, IncomingRequest>) -> Fields {
        Fields::with(Vec::new(), true)
    }
    fn consume(&mut self, _: Borrowed<'_, IncomingRequest>) -> Result<IncomingBody, ()> {
        Err(())
    }
}

impl http::IncomingResponse<Negative, Fields, IncomingBody> for Guest {
    type T = IncomingResponse;

    fn status(&mut self, _: Borrowed<'_, IncomingResponse>) -> StatusCode {
        0
    }
    fn headers(&mut self, _: Borrowed<'_, IncomingResponse>) -> Fields {
        Fields::with(Vec::new(), true)
    }
    fn consume(&mut self, _: Borrowed<'_, IncomingResponse>) -> Result<IncomingBody, ()> {
        Err(())
    }
}

impl http::OutgoingBody<Negative, Fields, resources::OutputStream> for Guest {
    type T = OutgoingBody;

    fn write(&mut self, _: Borrowed<'_, OutgoingBody>) -> Result<resources::OutputStream, ()> {
        Err(())
    }
    fn finish(&mut self, _: OutgoingBody, _: Option<Fields>) -> Result<(), HttpError> {
        Ok(())
    }
}

impl http::OutgoingRequest<Negative, Fields, OutgoingBody> for Guest {
    type T = OutgoingRequest;

    fn new(&mut self, headers: Fields) -> OutgoingRequest {
        OutgoingRequest(Mutex::new(OutgoingParts {
            method: Method::Get,
            path_with_query: None,
            scheme: None,
            authority: None,
            headers: headers.into_entries(),
            body_taken: false,
        }))
    }
    fn body(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Result<OutgoingBody, ()> {
        let taken = std::mem::replace(&mut lock(&request.0).body_taken, true);
        if taken { Err(()) } else { Ok(OutgoingBody) }
    }
    fn method(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Method {
        copy_method(&lock(&request.0).method)
    }
    fn set_method(&mut self, request: Borrowed<'_, OutgoingRequest>, method: Method) -> Result<(), ()> {
        lock(&request.0).method = method;
        Ok(())
    }
    fn path_with_query(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Option<String> {
        lock(&request.0).path_with_query.clone()
    }
    fn set_path_with_query(&mut self, request: Borrowed<'_, OutgoingRequest>, path: Option<String>) -> Result<(), ()> {
        lock(&request.0).path_with_query = path;
        Ok(())
    }
    fn scheme(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Option<Scheme> {
        lock(&request.0).scheme.as_ref().map(copy_scheme)
    }
    fn set_scheme(&mut self, request: Borrowed<'_, OutgoingRequest>, scheme: Option<Scheme>) -> Result<(), ()> {
        lock(&request.0).scheme = scheme;
        Ok(())
    }
    fn authority(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Option<String> {
        lock(&request.0).authority.clone()
    }
    fn set_authority(&mut self, request: Borrowed<'_, OutgoingRequest>, authority: Option<String>) -> Result<(), ()> {
        lock(&request.0).authority = authority;
        Ok(())
    }
    fn headers(&mut self, request: Borrowed<'_, OutgoingRequest>) -> Fields {
        Fields::with(lock(&request.0).headers.clone(), true)
    }
}

impl http::OutgoingResponse<Negative, Fields, OutgoingBody> for Guest {
    type T = OutgoingResponse;

    fn new(&mut self, headers: Fields) -> OutgoingResponse {
        OutgoingResponse(Mutex::new(Response { status: 200, headers: headers.into_entries(), body_taken: false }))
    }
    fn status_code(&mut self, response: Borrowed<'_, OutgoingResponse>) -> StatusCode {
        lock(&response.0).status
    }
    fn set_status_code(&mut self, response: Borrowed<'_, OutgoingResponse>, status: StatusCode) -> Result<(), ()> {
        if !(100..=599).contains(&status) {
            return Err(());
        }
        lock(&response.0).status = status;
        Ok(())
    }
    fn headers(&mut self, response: Borrowed<'_, OutgoingResponse>) -> Fields {
        Fields::with(lock(&response.0).headers.clone(), true)
    }
    fn body(&mut self, response: Borrowed<'_, OutgoingResponse>) -> Result<OutgoingBody, ()> {
        let taken = std::mem::replace(&mut lock(&response.0).body_taken, true);
        if taken { Err(()) } else { Ok(OutgoingBody) }
    }
}

impl http::RequestOptions<Negative, Duration> for Guest {
    type T = RequestOptions;

    fn new(&mut self) -> RequestOptions {
        RequestOptions(Mutex::new(Timeouts::default()))
    }
    fn connect_timeout(&mut self, options: Borrowed<'_, RequestOptions>) -> Option<Duration> {
        lock(&options.0).connect
    }
    fn set_connect_timeout(
        &mut self,
        options: Borrowed<'_, RequestOptions>,
        value: Option<Duration>,
    ) -> Result<(), ()> {
        lock(&options.0).connect = value;
        Ok(())
    }
    fn first_byte_timeout(&mut self, options: Borrowed<'_, RequestOptions>) -> Option<Duration> {
        lock(&options.0).first_byte
    }
    fn set_first_byte_timeout(
        &mut self,
        options: Borrowed<'_, RequestOptions>,
        value: Option<Duration>,
    ) -> Result<(), ()> {
        lock(&options.0).first_byte = value;
        Ok(())
    }
    fn between_bytes_timeout(&mut self, options: Borrowed<'_, RequestOptions>) -> Option<Duration> {
        lock(&options.0).between_bytes
    }
    fn set_between_bytes_timeout(
        &mut self,
        options: Borrowed<'_, RequestOptions>,
        value: Option<Duration>,
    ) -> Result<(), ()> {
        lock(&options.0).between_bytes = value;
        Ok(())
    }
}

impl http::ResponseOutparam<Negative, OutgoingResponse> for Guest {
    type T = ResponseOutparam;

    fn set(&mut self, _: ResponseOutparam, _: Result<OutgoingResponse, HttpError>) {}
}

impl Types<Negative, Duration, resources::IoError, resources::InputStream, resources::OutputStream, resources::Pollable>
    for Guest
{
    fn http_error_code(&mut self, _: Borrowed<'_, resources::IoError>) -> Option<HttpError> {
        None
    }
}

impl OutgoingHandler<Negative, HttpError, FutureIncomingResponse, OutgoingRequest, RequestOptions> for Guest {
    fn handle(&mut self, _: OutgoingRequest, _: Option<RequestOptions>) -> Result<FutureIncomingResponse, HttpError> {
        Err(HttpError::HTTPRequestDenied)
    }
}
