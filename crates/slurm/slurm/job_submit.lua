-- pliant's job_submit plugin for Slurm (`JobSubmitPlugins=lua`).
--
-- Every job submitted to a partition that `pliant slurm` manages is held
-- at submission (priority 0, as `sbatch --hold` does), inside slurmctld,
-- before Slurm's scheduler can see it: no job of pliant's partitions starts
-- before pliant has placed it, however loaded slurmctld or pliant are.
--
-- Install: copy this file as `job_submit.lua` into the directory of
-- `slurm.conf`, set `JobSubmitPlugins=lua` in `slurm.conf`, name pliant's
-- partitions below, and run `scontrol reconfigure`.

-- The partitions `pliant slurm --partition` manages.
local PLIANT_PARTITIONS = { pliant = true }

-- Whether a job asking for `partitions` ("a" or "a,b"; nil: the default
-- partition, found in `part_list`) may run in one of pliant's.
local function in_pliant(partitions, part_list)
   if partitions == nil then
      for _, part in pairs(part_list) do
         if part.flag_default == 1 then
            return PLIANT_PARTITIONS[part.name] == true
         end
      end
      return false
   end
   for name in string.gmatch(partitions, "[^,]+") do
      if PLIANT_PARTITIONS[name] then
         return true
      end
   end
   return false
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   if in_pliant(job_desc.partition, part_list) then
      job_desc.priority = 0
   end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end

return slurm.SUCCESS
