#!/usr/bin/env bash
# Builds, once, the kernel and initramfs of the throwaway VM that tests/vm/run.sh boots.
#
# The VM exists because Hyperlight needs a hypervisor it can drive, and not every machine's
# /dev/kvm is one (a kvm-pvm host cannot run a Hyperlight guest). QEMU's software emulation
# with `-cpu max` offers AMD SVM with nested paging, so a stock Debian kernel inside it loads
# kvm_amd and gets a /dev/kvm that works.
#
# Output, in $CODEACT_VM_DIR (default target/vm): vmlinux (or vmlinuz), initramfs.cpio.gz and a
# stamp naming the kernel package. Nothing is installed into /boot: the kernel and busybox
# packages are fetched with `apt-get download` and unpacked with `dpkg-deb -x`. qemu-system-x86
# and cpio are installed with apt-get when missing. Set CODEACT_VM_KERNEL=linux-image-<v>-amd64
# to choose the kernel package (default: what linux-image-amd64 depends on).
set -euo pipefail
vm_src=$(cd "$(dirname "$0")" && pwd)
out=${CODEACT_VM_DIR:-$vm_src/../../target/vm}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)

log() { echo "tests/vm/image: $*" >&2; }
privileged() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else log "root is needed for: $*"; return 1
  fi
}
apt_get() { privileged env DEBIAN_FRONTEND=noninteractive apt-get -q "$@" >&2; }

missing=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
command -v cpio >/dev/null 2>&1 || missing+=(cpio)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt_get install -y --no-install-recommends "${missing[@]}" \
    || { apt_get update && apt_get install -y --no-install-recommends "${missing[@]}"; }
fi
command -v dpkg-deb >/dev/null 2>&1 || { log "dpkg-deb is missing: the VM image needs a Debian host"; exit 1; }

kernel_package() {
  if [ -n "${CODEACT_VM_KERNEL:-}" ]; then echo "$CODEACT_VM_KERNEL"; return; fi
  if [ -f "$out/kernel.pkg" ]; then cat "$out/kernel.pkg"; return; fi
  local found
  found=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  if [ -z "$found" ]; then
    apt_get update || true
    found=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  fi
  [ -n "$found" ] || { log "cannot tell which kernel linux-image-amd64 means; set CODEACT_VM_KERNEL"; exit 1; }
  echo "$found"
}
kpkg=$(kernel_package)
recipe=$(cat "$vm_src/init.sh" "$0" | sha256sum | cut -c1-16)
if [ "$(cat "$out/stamp" 2>/dev/null)" = "$recipe $kpkg" ] && [ -f "$out/initramfs.cpio.gz" ] \
   && { [ -f "$out/vmlinux" ] || [ -f "$out/vmlinuz" ]; }; then
  exit 0
fi

mkdir -p "$out/debs"
download() {
  (cd "$out/debs"
   ls "$1"_*.deb >/dev/null 2>&1 && exit 0
   log "apt-get download $1"
   apt-get download "$1" >&2 || { apt_get update || true; apt-get download "$1" >&2; })
}
download "$kpkg"
download busybox-static

work=$(mktemp -d "$out/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$(ls "$out/debs/$kpkg"_*.deb | head -n 1)" "$work/kernel"
dpkg-deb -x "$(ls "$out"/debs/busybox-static_*.deb | head -n 1)" "$work/busybox"
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -n 1)
release=${vmlinuz##*/vmlinuz-}
modules=
for dir in "$work/kernel/lib/modules/$release" "$work/kernel/usr/lib/modules/$release"; do
  if [ -d "$dir" ]; then modules=$dir; break; fi
done
[ -n "$modules" ] || { log "$kpkg has no modules for $release"; exit 1; }

# QEMU boots an uncompressed ELF kernel through PVH, which skips the decompression that takes
# seconds under emulation. Debian's kernels are xz inside; without one, the bzImage boots.
python3 - "$vmlinuz" "$work/vmlinux" <<'PY' || rm -f "$work/vmlinux"
import lzma
import sys

image = open(sys.argv[1], "rb").read()
start = image.find(b"\xfd7zXZ\x00")
if start < 0:
    sys.exit(1)
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(image[start:])
if not elf.startswith(b"\x7fELF"):
    sys.exit(1)
open(sys.argv[2], "wb").write(elf)
PY

root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,host,modules}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
cp "$vm_src/init.sh" "$root/init"
chmod 0755 "$root/init" "$root/bin/busybox"
# busybox insmod resolves no dependencies: this list is in load order.
for module in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
              drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci fs/netfs/netfs \
              fs/fscache/fscache net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p virt/lib/irqbypass \
              arch/x86/kvm/kvm drivers/crypto/ccp/ccp arch/x86/kvm/kvm-amd; do
  name=${module##*/}
  file=$modules/kernel/$module.ko
  if [ -f "$file" ]; then
    cp "$file" "$root/modules/$name.ko"
  elif [ -f "$file.xz" ]; then
    xz -dc "$file.xz" > "$root/modules/$name.ko"
  elif [ -f "$file.zst" ]; then
    zstd -q -dc "$file.zst" > "$root/modules/$name.ko"
  elif grep -qs "kernel/$module.ko" "$modules/modules.builtin"; then
    continue
  else
    log "$kpkg lacks the module $module"; exit 1
  fi
  echo "$name" >> "$root/modules/order"
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"

mv -f "$work/initramfs.cpio.gz" "$out/initramfs.cpio.gz"
mv -f "$vmlinuz" "$out/vmlinuz"
if [ -f "$work/vmlinux" ]; then mv -f "$work/vmlinux" "$out/vmlinux"; else rm -f "$out/vmlinux"; fi
echo "$kpkg" > "$out/kernel.pkg"
echo "$recipe $kpkg" > "$out/stamp"
log "built for $kpkg ($release) in $out"
