import time

for i in range(3):
    time.sleep(0.1)
    print(i)
