// rinv's text of a domain's libvirt XML (virt/inventory.hpp): the fields xCAT's kvm plugin
// prints, units of memory, disks that are not disks left out, and XML that does not parse.

#include <gtest/gtest.h>

#include "virt/inventory.hpp"

namespace {

using cws::virt::inventory_text;

TEST(virt_inventory, prints_uuid_cpus_memory_disks_and_macs) {
  const char* xml = R"(<domain type='kvm' id='3'>
  <name>vm1</name>
  <uuid>4dea22b3-1d52-d8f3-2516-782e98ab3fa0</uuid>
  <memory unit='KiB'>2097152</memory>
  <currentMemory unit='KiB'>1048576</currentMemory>
  <vcpu placement='static'>4</vcpu>
  <devices>
    <disk type='file' device='disk'>
      <source file='/var/lib/libvirt/images/vm1.qcow2'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='file' device='cdrom'>
      <source file='/iso/install.iso'/>
      <target dev='sda' bus='sata'/>
    </disk>
    <disk type='block' device='disk'>
      <source dev='/dev/vg/vm1-data'/>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <interface type='bridge'>
      <mac address='52:54:00:12:34:56'/>
      <source bridge='br0'/>
    </interface>
    <interface type='network'>
      <mac address="52:54:00:ab:cd:ef"/>
    </interface>
  </devices>
</domain>)";
  EXPECT_EQ(inventory_text(xml), "UUID/GUID: 4dea22b3-1d52-d8f3-2516-782e98ab3fa0\n"
                                 "CPUs: 4\n"
                                 "Memory: 1024 MB\n"
                                 "Hard disk 1 (vda): /var/lib/libvirt/images/vm1.qcow2\n"
                                 "Hard disk 2 (vdb): /dev/vg/vm1-data\n"
                                 "Network adapter 1: 52:54:00:12:34:56\n"
                                 "Network adapter 2: 52:54:00:ab:cd:ef");
}

TEST(virt_inventory, memory_units_and_broken_xml) {
  EXPECT_EQ(inventory_text("<domain><memory unit='GiB'>2</memory></domain>"), "Memory: 2048 MB");
  EXPECT_EQ(inventory_text("<domain><memory>65536</memory></domain>"), "Memory: 64 MB");
  EXPECT_EQ(inventory_text(""), "");
  EXPECT_EQ(inventory_text("<domain><uuid>abc"), "");
  EXPECT_EQ(inventory_text("<domain><devices><disk device='disk'><target dev='vda"),
            "Hard disk 1 (): ");
}

} // namespace
