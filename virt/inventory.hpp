#pragma once

// rinv for virtual machines (mgt=kvm), from the domain's libvirt XML as xCAT's kvm plugin
// prints it: the UUID, the virtual CPUs, the memory, the disks and the network adapters.

#include <string>
#include <string_view>

namespace cws::virt {

/// rinv's lines for a domain described by libvirt XML `xml` (virDomainGetXMLDesc):
/// `UUID/GUID: ...`, `CPUs: 2`, `Memory: 1024 MB`, `Hard disk 1 (vda): /path`, `Network
/// adapter 1: 52:54:00:...`. Untrusted text: whatever does not parse is left out.
std::string inventory_text(std::string_view xml);

} // namespace cws::virt
