#!/bin/busybox sh
# PID 1 of the test VM (tests/vm/image.sh puts it into the initramfs as /init).
#
# Loads the modules in /modules/order (virtio, 9p, kvm, kvm_amd), mounts the host's root
# read-only from the 9p share "host" and the writable share "rw" at the path it has on the
# host, gives the host root fresh /proc, /sys, /dev, /run and /tmp (a repository that lies in
# the host's /tmp stays visible at its path), and runs the script named by
# `codeact.job=<base64 path>` on the kernel command line there, chrooted, as root, in
# `codeact.cwd=<base64 path>`. Its exit status goes to <job>.rc and to the console as
# CODEACT-VM-RC=<status>; then the VM powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

job=; rw=; cwd=
for arg in $(cat /proc/cmdline); do
  case $arg in
    codeact.job=*) job=$(echo "${arg#codeact.job=}" | base64 -d) ;;
    codeact.rw=*) rw=$(echo "${arg#codeact.rw=}" | base64 -d) ;;
    codeact.cwd=*) cwd=$(echo "${arg#codeact.cwd=}" | base64 -d) ;;
  esac
done

while read -r module; do
  insmod "/modules/$module.ko" || echo "CODEACT-VM: insmod $module failed"
done < /modules/order
[ -e /dev/kvm ] || echo "CODEACT-VM: no /dev/kvm (does the CPU offer SVM? see dmesg)"

status=99
if mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /host; then
  mount -t proc proc /host/proc
  mount -t sysfs sysfs /host/sys
  mount -t devtmpfs devtmpfs /host/dev
  mkdir -p /host/dev/pts /host/dev/shm
  mount -t devpts devpts /host/dev/pts
  mount -t tmpfs tmpfs /host/dev/shm
  mount -t tmpfs tmpfs /host/run
  mkdir -p /hosttmp
  mount --bind /host/tmp /hosttmp
  mount -t tmpfs -o mode=1777 tmpfs /host/tmp
  case $cwd in
    /tmp/*) mkdir -p "/host$cwd" && mount --bind "/hosttmp${cwd#/tmp}" "/host$cwd" \
              || echo "CODEACT-VM: showing $cwd failed" ;;
  esac
  case $rw in
    /tmp/*) mkdir -p "/host$rw" ;;
  esac
  if [ -n "$rw" ]; then
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rw "/host$rw" \
      || echo "CODEACT-VM: mounting the writable share at $rw failed"
  fi
  if [ -n "$job" ] && [ -f "/host$job" ]; then
    env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
      chroot /host /bin/sh "$job" < /dev/null
    status=$?
    echo "$status" > "/host$job.rc"
  else
    echo "CODEACT-VM: no job at '$job'"
  fi
else
  echo "CODEACT-VM: mounting the host's root failed"
fi
echo "CODEACT-VM-RC=$status"
sync
[ -n "$rw" ] && umount "/host$rw"
poweroff -f
