//! The Rust side of the guest's WIT world (`sandbox.wit`): its `executor` export and the
//! `hyperlight:sandbox/tools` import the host implements.

wasmtime::component::bindgen!({
    path: "src/backend/wasm/sandbox.wit",
    world: "sandbox",
    imports: { default: async | trappable },
    exports: { default: async },
});
